/** Names Quartermaster writes to and reads from Kubernetes objects. */

export const DEFAULT_SCHEDULER_NAME = 'quartermaster';
/** What Kubernetes assumes when a pod names no scheduler. */
export const KUBE_DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export const LABEL_JOB_ID = 'quartermaster.io/job-id';
export const LABEL_TEAM = 'quartermaster.io/team';
export const LABEL_REPLICA = 'quartermaster.io/replica';
/** On pods of a multi-role job: the replica's role. */
export const LABEL_ROLE = 'quartermaster.io/role';
/**
 * The replica of a workload pod Quartermaster bound: set through the Binding's metadata (the API server copies a
 * Binding's annotations onto the pod as it binds it), so giving a pod its replica costs no write of its own.
 */
export const ANNOTATION_REPLICA = 'quartermaster.io/replica';
/**
 * The admission a pod was created or bound for (BindTarget.admission): on Quartermaster's own pods (a later
 * admission replaces them) and on the workload pods it binds (an earlier run's pods are not the new admission's).
 */
export const ANNOTATION_ADMISSION = 'quartermaster.io/admission';
export const LABEL_GANG = 'quartermaster.io/gang';
export const ANNOTATION_GANG_SIZE = 'quartermaster.io/gang-size';
export const ANNOTATION_FLAVOR = 'quartermaster.io/flavor';
/**
 * A numeric priority: no longer taken from Kubernetes (a workload or gang that carries it is refused; members
 * choose a class, numbers are for admins over REST — ADR 0022).
 */
export const ANNOTATION_PRIORITY = 'quartermaster.io/priority';
/** The priority class a workload (label) or an annotated gang (annotation or label) asks for, under its team's ceiling. */
export const LABEL_PRIORITY_CLASS = 'quartermaster.io/priority-class';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'quartermaster';

/**
 * The replica a pod holds: annotation quartermaster.io/replica (workload pods, given it by their Binding), else the
 * label (Quartermaster's own pods, annotated gangs' pods, and pods another scheduler binds). Null when it holds none.
 */
export function replicaOfPod(pod: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } }): number | null {
  const raw = pod.metadata?.annotations?.[ANNOTATION_REPLICA] ?? pod.metadata?.labels?.[LABEL_REPLICA];
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;
}

/** Where a node's topology is read from, per flavor (each key may be overridden). */
export interface TopologyLabelKeys {
  zone: string;
  block: string;
  domain: string;
  tpuShape: string;
}

export const DEFAULT_TOPOLOGY_KEYS: TopologyLabelKeys = {
  zone: 'topology.kubernetes.io/zone',
  block: 'quartermaster.io/block',
  domain: 'nvidia.com/gpu.clique',
  tpuShape: 'cloud.google.com/gke-tpu-topology',
};
