import type { Logger } from 'pino';
import { eachLimited } from '#common';
import type { JobState } from '#core';
import { WorkloadJobRepository, type DbHandle } from '#db';
import {
  WORKLOAD_KINDS,
  WorkloadObjects,
  type EventRecorder,
  type KubeCluster,
  type KubeObject,
  type ObjectRef,
  type ResourceWatch,
  type WorkloadKind,
  type WorkloadRef,
  type WorkloadStatus,
} from '#kube';
import type { KubeJobStore } from './kube-job-store.js';
import { podReporting } from './pod-feedback.js';
import { involvedWorkload, workloadOfTemplate } from './workload-pods.js';

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

/** How often each workload watch is replaced by a fresh LIST+watch: the safety net for an event it missed. */
export const WORKLOAD_RESYNC_MS = 5 * 60_000;
/** A kind whose watch could not start (CRD missing, RBAC) is read by GETs, and its watch retried this much later. */
const WATCH_RETRY_MS = 30_000;

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

/** One kind's watch, when it started, or when it last failed to start. */
type KindView = { watch: ResourceWatch<KubeObject>; since: number } | { watch: null; failedAt: number };

/**
 * Ends workload jobs when their controllers say so: a Job's Complete/Failed condition, a JobSet's Completed/Failed,
 * a TrainJob's Complete/Failed, a RayJob's jobDeploymentStatus (RayClusters and LeaderWorkerSets run until deleted)
 * moves the job to SUCCEEDED / FAILED, and a workload gone moves it to CANCELLED. The transition releases the
 * gang's quota. Idempotent (each change is checked against the job's current state).
 *
 * The workloads are watched, not read: one LIST+watch per workload kind that an unfinished job uses (started by
 * the first pass that sees that kind; renewed every WORKLOAD_RESYNC_MS as a safety net; restarted with backoff
 * after a watch error, by KubeCluster). A pass takes the unfinished workload jobs from Postgres and judges each
 * against the watched object — no request to the API server. It runs every QM_KUBE_IMPORT_EVERY_MS, and at once
 * when a watch event shows an active job's workload finished, deleted or being deleted (or a kept child going).
 * Only a workload the watch does not hold (gone, another object of that name, or not delivered yet) is read by a
 * GET before its job is cancelled — the watch may lag behind the importer, which read it by a GET. (Before, every
 * pass made a GET per unfinished workload: about 2.1 per pod in bench:k8s jobsets.)
 */
export class WorkloadStatusSync {
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private passQueued = false;
  private closed = false;
  private readonly objects: WorkloadObjects;
  private readonly jobs: WorkloadJobRepository;
  private readonly events: EventRecorder;
  /** Jobs whose workload was told that its kept child holds the quota (once per process). */
  private readonly announced = new Set<string>();
  private readonly views = new Map<WorkloadKind, KindView>();
  private readonly starting = new Map<WorkloadKind, Promise<ResourceWatch<KubeObject> | null>>();
  /** Workload uids of the unfinished jobs at the last pass: the events that may end one of them. */
  private activeUids: ReadonlySet<string> = new Set<string>();

  constructor(
    private readonly cluster: KubeCluster,
    db: DbHandle,
    private readonly store: KubeJobStore,
    private readonly everyMs: number,
    private readonly onJobEnded: () => void,
    private readonly logger: Logger,
    private readonly resyncMs: number = WORKLOAD_RESYNC_MS,
  ) {
    this.objects = new WorkloadObjects(cluster.kubeConfig);
    this.jobs = new WorkloadJobRepository(db);
    this.events = podReporting(cluster, logger).events;
  }

  start(): void {
    if (this.everyMs <= 0) return;
    this.timer = setInterval(() => this.requestPass(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.chain;
    await Promise.all(this.starting.values());
    const views = [...this.views.values()];
    this.views.clear();
    for (const view of views) await view.watch?.stop();
  }

  /** Queues a pass unless one is queued already (ticks and events coalesce). */
  private requestPass(): void {
    if (this.passQueued || this.closed) return;
    this.passQueued = true;
    this.chain = this.chain.then(() => {
      this.passQueued = false;
      return this.runOnce().then(
        () => undefined,
        (error: unknown) => this.logger.warn({ err: error }, 'workload status sync failed'),
      );
    });
  }

  /** One pass; returns the jobs it ended. */
  async runOnce(): Promise<string[]> {
    const ended: string[] = [];
    const active = (await this.jobs.active()).flatMap((job) => {
      const workload = workloadOfTemplate({ workload: job.workload });
      return workload ? [{ job, workload }] : [];
    });
    this.activeUids = new Set(active.map(({ workload }) => workload.uid));
    for (const kind of new Set(active.map(({ workload }) => workload.kind))) await this.view(kind);
    await eachLimited(active, READ_CONCURRENCY, async ({ job, workload }) => {
      try {
        const object = await this.current(workload, workload.uid);
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
   * The object as its kind's watch holds it; read by a GET when the watch does not hold it (with `uid`: that
   * object): it may be gone, or the watch has not delivered it yet. Kinds that are not workloads are always read.
   */
  private async current(ref: ObjectRef, uid?: string): Promise<KubeObject | null> {
    const kind = ref.kind in WORKLOAD_KINDS ? (ref.kind as WorkloadKind) : null;
    const watch = kind ? await this.view(kind) : null;
    const held = watch?.get(ref.name, ref.namespace);
    if (held && (uid === undefined || held.metadata?.uid === uid)) return held;
    return this.objects.read(ref);
  }

  /** The kind's watch: started on first use, renewed when older than resyncMs; null while it cannot start. */
  private view(kind: WorkloadKind): Promise<ResourceWatch<KubeObject> | null> {
    const view = this.views.get(kind);
    const now = Date.now();
    if (view?.watch && (now - view.since < this.resyncMs || this.closed)) return Promise.resolve(view.watch);
    if (!view?.watch && (this.closed || (view && now - view.failedAt < WATCH_RETRY_MS))) return Promise.resolve(null);
    let starting = this.starting.get(kind);
    if (!starting) {
      starting = this.renew(kind, view).finally(() => this.starting.delete(kind));
      this.starting.set(kind, starting);
    }
    return starting;
  }

  private async renew(kind: WorkloadKind, view: KindView | undefined): Promise<ResourceWatch<KubeObject> | null> {
    try {
      const watch = await this.cluster.watchWorkloads(kind, {
        onAdd: (object) => this.onEvent(kind, object, false),
        onUpdate: (object) => this.onEvent(kind, object, false),
        onDelete: (object) => this.onEvent(kind, object, true),
        onError: (error) => this.logger.warn({ err: error, kind }, 'workload watch failed; restarting'),
      });
      this.views.set(kind, { watch, since: Date.now() });
      // A renewal: the fresh LIST replaces the old view (an event the old watch missed is in it).
      await view?.watch?.stop();
      if (this.closed) {
        this.views.delete(kind);
        await watch.stop();
        return null;
      }
      return watch;
    } catch (error) {
      this.logger.warn({ err: error, kind }, 'workload watch cannot start; its workloads are read one by one');
      if (view?.watch) {
        // Keep the old view; try again in WATCH_RETRY_MS.
        this.views.set(kind, { watch: view.watch, since: Date.now() - this.resyncMs + WATCH_RETRY_MS });
        return view.watch;
      }
      this.views.set(kind, { watch: null, failedAt: Date.now() });
      return null;
    }
  }

  private onEvent(kind: WorkloadKind, object: KubeObject, deleted: boolean): void {
    if (mayEndJob(kind, object, deleted, this.activeUids)) this.requestPass();
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
    const kept = await this.current(child);
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
