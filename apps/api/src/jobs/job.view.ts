import type { JobDetail, JobRecord } from '#db';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The job as the API shows it (list items omit `allocation` and `transitions`). */
export function jobView(j: JobRecord | JobDetail): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: j.id,
    name: j.name,
    team: j.team,
    kind: j.kind,
    priority: j.priority,
    preemptible: j.preemptible,
    replicas: j.replicas,
    minReplicas: j.minReplicas,
    acceleratorsPerReplica: j.acceleratorsPerReplica,
    cpuMillisPerReplica: j.cpuMillisPerReplica,
    memoryMiBPerReplica: j.memoryMiBPerReplica,
    flavors: j.flavors,
    flavorSelection: j.flavorSelection,
    speeds: j.speeds,
    topology: j.tpuShape === null ? { level: j.topologyLevel } : { level: j.topologyLevel, tpuShape: j.tpuShape },
    expectedRuntimeSeconds: j.expectedRuntimeSeconds,
    checkpoint: j.checkpoint ?? null,
    progress: { lastCheckpointAt: iso(j.lastCheckpointAt ?? null), completedFraction: j.completedFraction ?? null },
    template: j.template,
    state: j.state,
    flavor: j.flavor,
    admittedReplicas: j.admittedReplicas,
    pending:
      j.state === 'PENDING'
        ? {
            code: j.pendingCode,
            message: j.pendingMessage ?? 'waiting for the next scheduling cycle',
            position: j.pendingPosition,
            estimatedStartAt: iso(j.pendingEstimatedStartAt),
          }
        : null,
    preemptedBy: j.preemptedBy,
    preemptionCount: j.preemptionCount,
    createdBy: j.createdBy,
    submittedAt: iso(j.submittedAt),
    queuedAt: iso(j.queuedAt),
    admittedAt: iso(j.admittedAt),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
  };
  // A job imported from a Kubernetes workload (Job, JobSet, TrainJob, RayCluster/RayJob, LeaderWorkerSet) names it.
  const workload = (j.template as Record<string, unknown> | null)?.['workload'];
  if (workload && typeof workload === 'object') view.workload = workload;
  if ('allocation' in j) {
    view.allocation = j.allocation;
    view.transitions = j.transitions.map((t) => ({ from: t.from, to: t.to, at: t.at.toISOString(), reason: t.reason }));
  }
  return view;
}
