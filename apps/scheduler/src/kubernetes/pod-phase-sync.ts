import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ANNOTATION_ADMISSION, LABEL_JOB_ID, failedByNode, replicaOfPod, progressOfPod, type KubeCluster, type PodProgress, type ResourceWatch } from '#kube';
import { lostGangReason } from './bind-checks.js';
import type { KubeJobStore } from './kube-job-store.js';
import type { ReplicaFailurePolicy } from './kubernetes-settings.js';
import { LABEL_WORKLOAD_KIND } from './workload-pods.js';

/** What the pods of one gang say about the job: a pure function of their phases. */
export type GangVerdict =
  | { kind: 'none' }
  | { kind: 'running' }
  | { kind: 'succeeded' }
  /** `byNode`: the kubelet failed it without the pod's doing (admission refused, node pressure, shutdown). */
  | { kind: 'failed'; pod: string; byNode: string | null }
  | { kind: 'lost'; replica: number };

/**
 * `replicas` pods make the gang. A Failed pod fails the gang at once; all replicas Succeeded → succeeded;
 * every replica bound and Running (or already Succeeded) → running. Terminating pods are ignored — except
 * that once the gang is `running`, a replica with no live pod (deleted, or being evicted: a node drain,
 * a removed node's pods collected, `kubectl delete`) is `lost`: Quartermaster deletes pods only after it
 * moved the job out of RUNNING, so while RUNNING a missing pod is always someone else's doing. A
 * Succeeded pod counts as its replica's even when terminating or deleted (PodPhaseSync keeps those).
 */
export function gangVerdict(pods: readonly V1Pod[], replicas: number, running = false): GangVerdict {
  // A Succeeded replica stays done when its pod is deleted (a TTL controller, a cleanup script).
  const live = pods.filter((pod) => !pod.metadata?.deletionTimestamp || pod.status?.phase === 'Succeeded');
  const failed = live.find((pod) => pod.status?.phase === 'Failed');
  if (failed) return { kind: 'failed', pod: `${failed.metadata?.namespace}/${failed.metadata?.name}`, byNode: failedByNode(failed) };
  if (running) {
    const present = new Set(live.map(replicaOfPod));
    for (let replica = 0; replica < replicas; replica++) if (!present.has(replica)) return { kind: 'lost', replica };
  }
  if (replicas <= 0 || live.length < replicas) return { kind: 'none' };
  const phases = live.map((pod) => pod.status?.phase);
  if (phases.every((phase) => phase === 'Succeeded')) return { kind: 'succeeded' };
  if (live.every((pod) => pod.spec?.nodeName) && phases.every((phase) => phase === 'Running' || phase === 'Succeeded')) return { kind: 'running' };
  return { kind: 'none' };
}

/**
 * The pods that make a job's gang. For a workload (Job, JobSet, RayCluster, …) only the pods holding one of
 * its admitted replicas (replicaOfPod: given by the Binding, or the label set for another scheduler): an elastic workload admitted below
 * its size has more pods than replicas — the workers above the admission wait unbound outside the gang and
 * must not keep it from RUNNING. For Quartermaster's own and annotated gangs, every pod.
 */
export function gangMembers(pods: readonly V1Pod[]): V1Pod[] {
  if (!pods.some((pod) => pod.metadata?.labels?.[LABEL_WORKLOAD_KIND])) return [...pods];
  return pods.filter((pod) => replicaOfPod(pod) !== null);
}

/**
 * Whether a pod stands for the job's current admission: Quartermaster's own pods carry the admission they
 * were made for (ANNOTATION_ADMISSION), a workload's the one they were bound for (an earlier run's, still Running
 * while its suspension takes effect, says nothing of the new admission); pods without it (an imported gang's, a
 * workload's not bound yet) always do.
 */
export function ofAdmission(pod: V1Pod, admission: string | null): boolean {
  const made = pod.metadata?.annotations?.[ANNOTATION_ADMISSION];
  return made === undefined || admission === null || made === admission;
}

/**
 * Watches the pods of Quartermaster's jobs (label `quartermaster.io/job-id`, all namespaces) and moves the
 * jobs along as their pods do: BINDING → RUNNING, → SUCCEEDED, and on a Failed replica → FAILED (policy
 * `fail`) or back to PENDING (policy `requeue`). Every change is checked against the job's current
 * state in Postgres, so several processes running this, or a replayed event, change nothing twice.
 */
export class PodPhaseSync {
  private watch: ResourceWatch<V1Pod> | null = null;
  private readonly dirty = new Set<string>();
  /** Pods by job id, kept from the watch's events (evaluating a job must not scan every pod). */
  private readonly byJob = new Map<string, Map<string, V1Pod>>();
  /** Jobs that had a pod deleted or marked for deletion since they were last evaluated. */
  private readonly disrupted = new Set<string>();
  /** Keys of deleted pods kept in byJob because they had Succeeded: their replica is done, not lost. */
  private readonly finished = new Set<string>();
  /** Progress annotated on a job's pods (its executor's checkpoints), not yet written; and the last one written, per job. */
  /** Progress reports by job, with the namespace of the pod that carried each (checked against the job's). */
  private readonly progress = new Map<string, PodProgress & { key: string; namespace: string }>();
  private readonly reported = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly store: KubeJobStore,
    private readonly policy: ReplicaFailurePolicy,
    private readonly logger: Logger,
    private readonly onJobEnded: () => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const mark = (pod: V1Pod, deleted = false): void => {
      const jobId = pod.metadata?.labels?.[LABEL_JOB_ID];
      if (!jobId) return;
      const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
      let pods = this.byJob.get(jobId);
      const succeeded = pod.status?.phase === 'Succeeded';
      if ((deleted || pod.metadata?.deletionTimestamp) && !succeeded) this.disrupted.add(jobId);
      if (deleted && succeeded && pods) {
        pods.set(key, pod); // dropped with the job's other finished pods once none is live (evaluate)
        this.finished.add(key);
      } else if (deleted) {
        pods?.delete(key);
        this.finished.delete(key);
        if (pods?.size === 0) this.byJob.delete(jobId);
      } else {
        if (!pods) this.byJob.set(jobId, (pods = new Map<string, V1Pod>()));
        pods.set(key, pod);
        this.finished.delete(key); // a new pod of that name (a later admission) is live
        this.noteProgress(jobId, pod);
      }
      this.dirty.add(jobId);
      this.schedule();
    };
    this.watch = await this.cluster.watchPods(
      {
        onAdd: (pod) => mark(pod),
        onUpdate: (pod) => mark(pod),
        onDelete: (pod) => mark(pod, true),
        onError: (error) => this.logger.warn({ err: error }, 'pod phase watch error'),
      },
      { allNamespaces: true, labelSelector: LABEL_JOB_ID },
    );
    // RUNNING jobs without a single pod: all of them went away while nothing watched. No pod event will
    // ever name them, so they are evaluated (as lost) now.
    for (const jobId of await this.store.runningJobs()) {
      if (this.byJob.has(jobId)) continue;
      this.dirty.add(jobId);
      this.disrupted.add(jobId);
    }
    if (this.dirty.size > 0) this.schedule();
  }

  /** Pods of Quartermaster jobs as last seen (empty before start). */
  pods(): readonly V1Pod[] {
    return this.watch?.list() ?? [];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.watch?.stop();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.running.then(() => this.flush());
    }, 20);
  }

  /** An executor reports its checkpoints by annotating its pod (pod-progress.ts): the same report as the REST one. */
  private noteProgress(jobId: string, pod: V1Pod): void {
    const progress = progressOfPod(pod, Date.now());
    if (progress === null) return;
    if ('problem' in progress) {
      const key = `problem:${progress.problem}`;
      if (this.reported.get(jobId) !== key) this.logger.warn({ jobId, pod: pod.metadata?.name, problem: progress.problem }, 'pod progress annotation ignored');
      this.reported.set(jobId, key);
      return;
    }
    const key = `${progress.lastCheckpointAt?.toISOString() ?? ''}|${progress.completedFraction ?? ''}`;
    if (this.reported.get(jobId) === key || this.progress.get(jobId)?.key === key) return;
    this.progress.set(jobId, { ...progress, key, namespace: pod.metadata?.namespace ?? '' });
  }

  private async reportProgress(): Promise<void> {
    const reports = [...this.progress];
    this.progress.clear();
    for (const [jobId, report] of reports) {
      try {
        // Only a pod in the job's own namespace speaks for it: a copy of its labels elsewhere reports nothing.
        const job = await this.store.state(jobId);
        if (job !== null && this.homeOf(job) !== report.namespace) {
          this.logger.warn({ jobId, namespace: report.namespace }, "pod progress annotation ignored: the pod is not in the job's namespace");
          continue;
        }
        const r = await this.store.submitter().reportProgress(jobId, report);
        this.reported.set(jobId, report.key);
        if (this.reported.size > 10_000) this.reported.delete(this.reported.keys().next().value!);
        if (r.kind !== 'updated') this.logger.info({ jobId, result: r.kind }, 'pod progress annotation: job does not hold accelerators, not recorded');
      } catch (error) {
        this.logger.warn({ err: error, jobId }, 'pod progress annotation: cannot record, will retry');
        if (!this.progress.has(jobId)) this.progress.set(jobId, report);
      }
    }
  }

  private async flush(): Promise<void> {
    // Progress first: a checkpoint reported before a pod's end counts for the job it ends.
    await this.reportProgress();
    const jobs = [...this.dirty];
    this.dirty.clear();
    for (const jobId of jobs) {
      try {
        await this.evaluate(jobId);
      } catch (error) {
        this.logger.warn({ err: error, jobId }, 'pod phase sync: cannot update job, will retry on the next pod event');
        this.dirty.add(jobId);
        this.disrupted.add(jobId); // evaluate again even if its pods look undecided
      }
    }
    if ((this.dirty.size > 0 || this.progress.size > 0) && !this.stopped) setTimeout(() => this.schedule(), 500).unref();
  }

  /** The namespace of a job's pods: its workload's or imported gang's, else the one Quartermaster makes them in. */
  private homeOf(job: { namespace: string | null }): string {
    return job.namespace ?? this.cluster.namespace;
  }

  private async evaluate(jobId: string): Promise<void> {
    const byKey = this.byJob.get(jobId);
    const pods = [...(byKey?.values() ?? [])];
    const disrupted = this.disrupted.delete(jobId);
    await this.decide(jobId, pods, disrupted);
    // Deleted Succeeded pods are kept only while the gang may still need them (not after a failed decide:
    // its retry must see them again).
    if (byKey && [...byKey.keys()].every((key) => this.finished.has(key)) && this.byJob.get(jobId) === byKey) {
      for (const key of byKey.keys()) this.finished.delete(key);
      this.byJob.delete(jobId);
    }
  }

  private async decide(jobId: string, every: V1Pod[], disrupted: boolean): Promise<void> {
    // Nothing to decide while any live pod is still Pending and none failed or went away: skip the database.
    const members = gangMembers(every);
    if (!disrupted && gangVerdict(members, members.length).kind === 'none') return;
    const job = await this.store.state(jobId);
    if (!job || !['ADMITTED', 'BINDING', 'RUNNING'].includes(job.state)) return;
    // Pods of an earlier admission (a moved job's on its old nodes, Running until evicted) say nothing of this one;
    // nor do pods outside the job's namespace: a job's labels copied onto a pod elsewhere (anyone's, in a
    // namespace of their own) must not fail, requeue or start another team's job.
    const home = this.homeOf(job);
    const all = every.filter((pod) => pod.metadata?.namespace === home && ofAdmission(pod, job.admission));
    const pods = gangMembers(all);
    // An imported gang's pods all exist from its import on: one going away is a loss in any holding state.
    const verdict = gangVerdict(pods, job.replicas, job.state === 'RUNNING' || job.imported);
    const log = this.logger.child({ jobId });
    // A workload's (Job, JobSet, …) pods come and go as its controller decides (a failed pod is replaced and
    // rejoins its replica, a Job's next wave follows the first): they move it to RUNNING; its end is read
    // from the workload's own status (WorkloadStatusSync).
    if (verdict.kind !== 'running' && all.some((pod) => pod.metadata?.labels?.[LABEL_WORKLOAD_KIND])) return;
    switch (verdict.kind) {
      case 'none':
        return;
      case 'running':
        if (job.state === 'RUNNING') return;
        if (job.state === 'ADMITTED') await this.store.advance(jobId, 'ADMITTED', 'BINDING', 'pods bound');
        await this.store.advance(jobId, 'BINDING', 'RUNNING', `all ${job.replicas} replicas running`);
        log.info('job running: every replica Running');
        return;
      case 'succeeded':
        await this.store.transition(jobId, 'SUCCEEDED', `all ${job.replicas} replicas succeeded`);
        log.info('job succeeded');
        this.onJobEnded();
        return;
      case 'lost': {
        // A disruption, not the job's own failure: requeued whatever the replica-failure policy — unless the
        // pods are not ours to re-create (imported gang): then the job ends and its other pods are deleted.
        const what = `replica ${verdict.replica} lost: its pod was deleted or is being evicted (node drained or removed, preempted, or deleted by hand)`;
        await this.endOrRequeue(jobId, job.imported, what, `${what}; gang requeued`);
        log.info({ replica: verdict.replica, imported: job.imported }, 'replica lost');
        this.onJobEnded();
        return;
      }
      case 'failed':
        if (verdict.byNode !== null) {
          // The node refused or dropped it (another scheduler's pod took the room, node pressure): not the job's failure.
          const what = `replica pod ${verdict.pod} was failed by its node (${verdict.byNode})`;
          await this.endOrRequeue(jobId, job.imported, what, `${what}; gang requeued`);
          log.info({ pod: verdict.pod, byNode: verdict.byNode }, 'replica failed by its node');
        } else if (this.policy === 'requeue') {
          await this.endOrRequeue(jobId, job.imported, `replica pod ${verdict.pod} failed`, `replica pod ${verdict.pod} failed; gang requeued`);
          log.info({ pod: verdict.pod }, 'replica failed: gang requeued');
        } else {
          await this.store.transition(jobId, 'FAILED', `replica pod ${verdict.pod} failed`);
          log.info({ pod: verdict.pod }, 'replica failed: gang failed');
        }
        this.onJobEnded();
        return;
    }
  }

  /**
   * Requeue (the gang runs again on fresh pods) — or, for an imported gang, end it: FAILED, and the
   * `delete` side effect removes its surviving pods so nothing holds accelerators for a broken gang.
   */
  private async endOrRequeue(jobId: string, imported: boolean, what: string, requeueReason: string): Promise<void> {
    if (imported) await this.store.transition(jobId, 'FAILED', lostGangReason(`imported gang ${what}`));
    else await this.store.requeue(jobId, requeueReason);
  }
}
