import { topologyLabelsOf, type JobState, type PodPolicy } from '#core';
import { FlavorRepository, GroupBatcher, JobRepository, KubeJobsRepository, PriorityClassRepository, moveJobs, podPolicyOf, type BindTargetRow, type DbHandle, type JobPodsState, type PriorityChoices } from '#db';
import { podTemplateOf, type JobPodTemplate, type KubeFlavor, type WorkloadRef } from '#kube';
import type { WaitingJob } from './pod-feedback.js';
import { workloadOfTemplate } from './workload-pods.js';

/** Where an imported gang's pods live (set in the job's template by the gang importer). */
export interface ImportedFrom {
  namespace: string;
  gang: string;
}

/** What the bind handler needs to place a job's pods. */
export interface BindTarget {
  id: string;
  name: string;
  team: string;
  priority: number;
  state: JobState;
  acceleratorsPerReplica: number;
  template: JobPodTemplate;
  /** Seconds the job's checkpoint policy gives it to checkpoint when evicted; null when it does not checkpoint. */
  checkpointGraceSeconds: number | null;
  importedFrom: ImportedFrom | null;
  /** The Kubernetes workload (Job, JobSet, …) the job stands for, when it was imported from one. */
  workload: WorkloadRef | null;
  flavor: { name: string; resourceName: string; nodeLabels: Record<string, string> } | null;
  /** Replica → node and what it holds there (and its role in a multi-role job, else null), from the job's allocation. */
  allocations: { replica: number; node: string; accelerators: number; cpuMillis: number; memoryMiB: number; role: string | null }[];
  /** The allocation's nodes as the node sync last wrote them (capacity, schedulable). */
  nodes: { name: string; accelerators: number; cpuMillis: number; memoryMiB: number; schedulable: boolean }[];
  /** Other jobs' replicas allocated on those nodes (`<job id>/<replica>/<node>`): their pods there hold their share. */
  neighbours: Set<string>;
  /** Identifies the current admission (admitted_at, ms): pods of an earlier admission are stale. */
  admission: string;
  /** Victims of the current admission: their pods must be gone before this job's are bound. */
  preemptedJobs: string[];
  /** Its team's pod policy now: its pods are made only from a template the policy still allows. */
  podPolicy: PodPolicy;
  /** The namespace of its pods (a REST job's team's, a workload's or an imported gang's); null: QM_KUBE_NAMESPACE. */
  namespace: string | null;
  /**
   * Outbox ids of its `delete`/`evict` entries not carried out yet, written when an earlier admission was released
   * (empty unless it holds): its bind waits for them, so what they remove is never left to the current admission.
   */
  releasing: string[];
}

const ACTOR = 'kubernetes';

interface Advance {
  jobId: string;
  from: 'ADMITTED' | 'BINDING';
  to: 'BINDING' | 'RUNNING';
  reason: string;
}

/** Postgres reads and writes of Kubernetes mode (jobs' targets, pod-driven state changes, requeue). */
export class KubeJobStore {
  private readonly jobs: JobRepository;
  private readonly flavorRepo: FlavorRepository;
  private readonly priorityClasses: PriorityClassRepository;

  private readonly reads: KubeJobsRepository;

  constructor(private readonly db: DbHandle) {
    this.jobs = new JobRepository(db);
    this.flavorRepo = new FlavorRepository(db);
    this.priorityClasses = new PriorityClassRepository(db);
    this.reads = new KubeJobsRepository(db);
  }

  /** What the bind handler needs of a job; concurrent binds read a group per statement (GroupBatcher). */
  async bindTarget(jobId: string): Promise<BindTarget | null> {
    const row = await this.reads.bindTarget(jobId);
    return row ? bindTargetOf(row) : null;
  }

  /** What the waiting pods of these jobs should show (state and pending reason); unknown ids are left out. */
  waitingJobs(ids: readonly string[]): Promise<WaitingJob[]> {
    return this.reads.waitingJobs(ids);
  }

  /** Preempted workloads' jobs still PENDING (at most `limit`), each with its workload: they may have no pods. */
  async preemptedWaitingWorkloads(limit: number): Promise<(WaitingJob & { workload: WorkloadRef })[]> {
    const rows = await this.reads.preemptedWaitingWorkloads(limit);
    return rows.flatMap((row) => {
      const workload = workloadOfTemplate({ workload: row.workload });
      return workload === null ? [] : [{ ...row, workload }];
    });
  }

  /** Why its pods are evicted (its latest preemption or move, whichever came last), for the Events on them. */
  evictionReason(jobId: string): Promise<{ moved: boolean; message: string } | null> {
    return this.reads.evictionReason(jobId);
  }

  /** Ids of the RUNNING jobs. */
  runningJobs(): Promise<string[]> {
    return this.reads.runningJobs();
  }

  /**
   * State, admitted replica count, whether the job is an imported gang (its pods are not Quartermaster's to
   * re-create), and its current admission (BindTarget.admission; null before its first).
   */
  state(jobId: string): Promise<JobPodsState | null> {
    return this.reads.state(jobId);
  }

  /**
   * A non-terminal step (ADMITTED → BINDING, ADMITTED|BINDING → RUNNING) in one statement: the job row,
   * its transition and its event, only when the job is still in `from` (a replay changes nothing). True
   * when this call made the step; concurrent steps go a group per statement.
   */
  advance(jobId: string, from: 'ADMITTED' | 'BINDING', to: 'BINDING' | 'RUNNING', reason: string): Promise<boolean> {
    return this.advances.call({ jobId, from, to, reason });
  }

  private readonly advances = new GroupBatcher<Advance, boolean>(async (steps) => {
    const { results } = await moveJobs(
      this.db.pool,
      steps.map((s) => ({ jobId: s.jobId, from: [s.from], to: s.to, reason: s.reason, effects: [] })),
      { actor: ACTOR },
    );
    return results.map((r) => r.moved);
  });

  /** A lifecycle step driven by the cluster (checked against the lifecycle table; terminal → `delete` outbox). */
  async transition(jobId: string, to: JobState, reason: string): Promise<'changed' | 'unchanged' | 'invalid' | 'missing'> {
    return (await this.jobs.report(jobId, to, ACTOR, reason)).kind;
  }

  /**
   * The gang goes back to PENDING (through PREEMPTED, as the lifecycle wants) and its allocation is
   * released: a replica failed under policy `requeue`, a replica was lost, or its nodes turned out to be
   * taken at bind time. A `delete` outbox entry removes its remaining pods unless `deletePods` is false (an
   * imported gang none of whose pods was bound keeps them, to be bound on its next admission). With
   * `notBeforeMs` it stays out of the cycles that long (the node sync catches up with what it hit).
   */
  async requeue(jobId: string, reason: string, options: { deletePods?: boolean; notBeforeMs?: number } = {}): Promise<boolean> {
    const deletePods = options.deletePods ?? true;
    const { results } = await moveJobs(
      this.db.pool,
      [
        {
          jobId,
          to: 'PENDING',
          via: 'PREEMPTED',
          reason,
          requeue: { queuedAt: new Date(Date.now() + (options.notBeforeMs ?? 0)) },
          event: { kind: 'job.requeued', data: { reason } },
          effects: deletePods ? [{ kind: 'delete' }] : [],
        },
      ],
      { actor: ACTOR },
    );
    return results[0]!.moved;
  }

  /** Flavors as the node mapping and gang import need them. */
  async kubeFlavors(): Promise<KubeFlavor[]> {
    const flavors = await this.flavorRepo.list();
    return flavors.map((f) => ({ name: f.name, resourceName: f.resourceName, nodeLabels: f.nodeLabels, topologyKeys: topologyLabelsOf(f.kind, f.topologyLabels) }));
  }

  /** Every priority class and every team's ceiling, as imported workloads choose among them (read once per import pass). */
  priorityChoices(): Promise<PriorityChoices> {
    return this.priorityClasses.choices();
  }

  /** The job an earlier import under this Idempotency-Key made, or null. */
  importedJobId(key: string): Promise<string | null> {
    return this.reads.importedJobId(key);
  }

  /** The namespace of each known job's pods (null: QM_KUBE_NAMESPACE); ids of no job are left out. */
  podNamespaces(jobIds: readonly string[]): Promise<Map<string, string | null>> {
    return this.reads.podNamespaces(jobIds);
  }

  /** Every team's namespaces as stored (empty: the team's own name). */
  teamNamespaces(): Promise<Map<string, string[]>> {
    return this.reads.teamNamespaces();
  }

  submitter(): JobRepository {
    return this.jobs;
  }
}

function bindTargetOf(row: BindTargetRow): BindTarget {
  const template = row.template;
  const imported = template['importedFrom'] as ImportedFrom | undefined;
  return {
    id: row.id,
    name: row.name,
    team: row.team,
    priority: row.priority,
    state: row.state,
    acceleratorsPerReplica: row.accelerators_per_replica,
    template: podTemplateOf(template),
    checkpointGraceSeconds: row.checkpoint_grace,
    importedFrom: imported && typeof imported.namespace === 'string' ? imported : null,
    workload: workloadOfTemplate(template),
    flavor: row.flavor && row.resource_name ? { name: row.flavor, resourceName: row.resource_name, nodeLabels: row.node_labels ?? {} } : null,
    allocations: row.allocations,
    nodes: row.nodes,
    neighbours: new Set(row.neighbours.map((n) => `${n.job}/${n.replica}/${n.node}`)),
    preemptedJobs: row.preempted_jobs ?? [],
    admission: row.admission ?? '',
    podPolicy: podPolicyOf(row.pod_policy),
    namespace: row.namespace,
    releasing: row.releasing,
  };
}
