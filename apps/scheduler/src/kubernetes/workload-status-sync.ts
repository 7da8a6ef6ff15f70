import type { Logger } from 'pino';
import { eachLimited } from '#common';
import type { JobState } from '#core';
import { WorkloadJobRepository, type DbHandle } from '#db';
import {
  WORKLOAD_KINDS,
  type EventRecorder,
  type KubeCluster,
  type KubeObject,
  type WorkloadKind,
  type WorkloadRef,
  type WorkloadStatus,
} from '#kube';
import type { KubeJobStore } from './kube-job-store.js';
import { PassLoop } from './pass-loop.js';
import { podReporting } from './pod-feedback.js';
import { involvedWorkload, workloadOfTemplate } from './workload-pods.js';
import { WorkloadViews } from './workload-views.js';

const HOLDING: ReadonlySet<JobState> = new Set(['ADMITTED', 'BINDING', 'RUNNING']);

/** What a workload job becomes, given its state and what the workload's controller says. Pure. */
export function workloadVerdict(
  state: JobState,
  status: WorkloadStatus | 'gone',
  /** For a PENDING job: how it last lost an allocation (WorkloadJobRepository.lastRelease), null if it never held one. */
  released: { reason: string } | null = null,
): { to: JobState; reason: string } | null {
  if (status === 'gone') return { to: 'CANCELLED', reason: 'its workload was deleted' };
  if (status.phase === 'active') return null;
  if (status.phase === 'failed') return { to: 'FAILED', reason: status.message };
  if (state !== 'PENDING') return { to: 'SUCCEEDED', reason: status.message };
  // Succeeded while the job waits (PENDING cannot move to SUCCEEDED): it has nothing left to run. Either it
  // never ran, or it ran, lost its allocation (a kept RayCluster preempted after its RayJob succeeded) and its
  // workload had finished anyway.
  return released
    ? {
        to: 'CANCELLED',
        reason: `its workload finished (${status.message}) after the job had been admitted and then lost its allocation (${released.reason}); nothing is left to run, so it is not admitted again`,
      }
    : { to: 'CANCELLED', reason: `its workload finished before admission (${status.message})` };
}

/** Objects read at once in a pass (only those the watches do not hold: gone, or not delivered yet). */
const READ_CONCURRENCY = 8;

/**
 * Whether a watch event on `object` (of `kind`) may end a job now: the object (or its owner, when the object is a
 * kept child going away) is the workload of a job that was active at the last pass, and the object is gone,
 * being deleted or finished. Pure.
 */
export function mayEndJob(kind: WorkloadKind, object: KubeObject, deleted: boolean, activeUids: ReadonlySet<string>): boolean {
  const going = deleted || Boolean(object.metadata?.deletionTimestamp);
  const uid = object.metadata?.uid;
  if (uid !== undefined && activeUids.has(uid) && (going || WORKLOAD_KINDS[kind].status(object).phase !== 'active')) return true;
  // A RayJob's kept RayCluster going: the RayJob's job may end (its pods no longer hold the gang's accelerators).
  return going && (object.metadata?.ownerReferences ?? []).some((owner) => activeUids.has(owner.uid));
}

/**
 * Ends workload jobs when their controllers say so: a Job's Complete/Failed condition, a JobSet's Completed/Failed,
 * a TrainJob's Complete/Failed, a RayJob's jobDeploymentStatus (RayClusters and LeaderWorkerSets run until deleted)
 * moves the job to SUCCEEDED / FAILED, and a workload gone moves it to CANCELLED. The transition releases the
 * gang's quota. Idempotent (each change is checked against the job's current state).
 *
 * The workloads are watched, not read (WorkloadViews: one LIST+watch per workload kind an unfinished job uses,
 * shared with the importer). A pass takes the unfinished workload jobs from Postgres and judges each against the
 * watched object — no request to the API server. It runs every QM_KUBE_IMPORT_EVERY_MS, and at once when a watch
 * event shows an active job's workload finished, deleted or being deleted (or a kept child going). Only a
 * workload the view does not hold (gone, another object of that name, or not delivered yet: the watch may lag
 * behind the importer's read) is read by a GET before its job is cancelled. (Before, every pass made a GET per
 * unfinished workload: about 2.1 per pod in bench:k8s jobsets.)
 */
export class WorkloadStatusSync {
  private readonly passes: PassLoop;
  private readonly jobs: WorkloadJobRepository;
  private readonly events: EventRecorder;
  /** Jobs whose workload was told that its kept child holds the quota (once per process). */
  private readonly announced = new Set<string>();
  private readonly views: WorkloadViews;
  private readonly ownViews: boolean;
  /** Workload uids of the unfinished jobs at the last pass: the events that may end one of them. */
  private activeUids: ReadonlySet<string> = new Set<string>();

  constructor(
    cluster: KubeCluster,
    db: DbHandle,
    private readonly store: KubeJobStore,
    everyMs: number,
    private readonly onJobEnded: () => void,
    private readonly logger: Logger,
    /** The watched workloads (kubernetes-mode shares them with the importer); by default its own, stopped with it. */
    views?: WorkloadViews,
  ) {
    this.passes = new PassLoop(() => this.runOnce(), everyMs, logger, 'workload status sync failed');
    this.views = views ?? new WorkloadViews(cluster, logger);
    this.ownViews = !views;
    this.views.onEvent((kind, object, deleted) => {
      if (mayEndJob(kind, object, deleted, this.activeUids)) this.passes.request();
    });
    this.jobs = new WorkloadJobRepository(db);
    this.events = podReporting(cluster, logger).events;
  }

  start(): void {
    this.passes.start();
  }

  async stop(): Promise<void> {
    await this.passes.stop();
    if (this.ownViews) await this.views.stop();
  }

  /** One pass; returns the jobs it ended. */
  async runOnce(): Promise<string[]> {
    const ended: string[] = [];
    const active = (await this.jobs.active()).flatMap((job) => {
      const workload = workloadOfTemplate({ workload: job.workload });
      return workload ? [{ job, workload }] : [];
    });
    this.activeUids = new Set(active.map(({ workload }) => workload.uid));
    await eachLimited(active, READ_CONCURRENCY, async ({ job, workload }) => {
      try {
        const object = await this.views.current(workload, workload.uid);
        const status =
          !object || object.metadata?.uid !== workload.uid || object.metadata?.deletionTimestamp
            ? 'gone'
            : WORKLOAD_KINDS[workload.kind].status(object);
        const released =
          job.state === 'PENDING' && status !== 'gone' && status.phase === 'succeeded'
            ? await this.jobs.lastRelease(job.id)
            : null;
        const verdict = workloadVerdict(job.state, status, released);
        if (!verdict) return;
        if (object && status !== 'gone' && (await this.keptAlive(job, workload, object, verdict.reason))) return;
        const reason = `${workload.kind} ${workload.namespace}/${workload.name}: ${verdict.reason}`;
        if ((await this.store.transition(job.id, verdict.to, reason)) === 'changed') {
          ended.push(job.id);
          this.logger.info({ jobId: job.id, workload, to: verdict.to }, 'workload job ended');
        }
      } catch (error) {
        this.logger.warn(
          { err: error, jobId: job.id, workload },
          'workload status sync: cannot read the workload; next pass',
        );
      }
    });
    if (ended.length > 0) this.onJobEnded();
    return ended;
  }

  /**
   * True while a finished workload's kept child (a RayJob's RayCluster, kept since shutdownAfterJobFinishes is
   * not true) still exists: its pods hold the gang's accelerators, so the job keeps holding its quota (it stays
   * preemptible: a preemption deletes the cluster). The workload hears why once per process; the job ends with
   * the workload's verdict once the child is deleted.
   */
  private async keptAlive(job: { id: string; state: JobState }, workload: WorkloadRef, object: KubeObject, finished: string): Promise<boolean> {
    if (!HOLDING.has(job.state)) return false;
    const child = WORKLOAD_KINDS[workload.kind].keptChild?.(object);
    if (!child) return false;
    const kept = await this.views.current(child);
    if (!kept || kept.metadata?.deletionTimestamp) {
      this.announced.delete(job.id);
      return false;
    }
    if (!this.announced.has(job.id)) {
      await this.events.record(
        involvedWorkload(workload),
        'Warning',
        'FinishedWorkloadKeepsPods',
        `${workload.kind} ${workload.namespace}/${workload.name} finished (${finished}), but its ${child.kind} ${child.namespace}/${child.name} is kept ` +
          `(shutdownAfterJobFinishes is not true, or its ttlSecondsAfterFinished has not passed) and its pods still hold the gang's accelerators: Quartermaster job ${job.id} keeps holding its team's quota ` +
          `until the ${child.kind} is deleted (kubectl delete ${child.kind.toLowerCase()} ${child.name} -n ${child.namespace}) or preempted`,
      );
      this.announced.add(job.id);
      if (this.announced.size > 10_000) this.announced.delete(this.announced.values().next().value!);
      this.logger.info({ jobId: job.id, workload, kept: child }, 'finished workload keeps its pods; job keeps its quota');
    }
    return true;
  }
}
