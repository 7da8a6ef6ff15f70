/** Names Quartermaster writes to and reads from Kubernetes objects. */

export const DEFAULT_SCHEDULER_NAME = 'quartermaster';
/** What Kubernetes assumes when a pod names no scheduler. */
export const KUBE_DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export const LABEL_JOB_ID = 'quartermaster.io/job-id';
export const LABEL_TEAM = 'quartermaster.io/team';
export const LABEL_REPLICA = 'quartermaster.io/replica';
export const LABEL_GANG = 'quartermaster.io/gang';
export const ANNOTATION_GANG_SIZE = 'quartermaster.io/gang-size';
export const ANNOTATION_FLAVOR = 'quartermaster.io/flavor';
export const ANNOTATION_PRIORITY = 'quartermaster.io/priority';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'quartermaster';

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
