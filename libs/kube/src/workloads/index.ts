// Gangs from the workloads teams already run (Job, JobSet, TrainJob, RayCluster/RayJob, LeaderWorkerSet):
// the owner chain of a pod, each kind's roles, status and suspend, and the gang they make. Pure.
export * from './workload.js';
export * from './workload-job.js';
export * from './workload-jobset.js';
export * from './workload-trainjob.js';
export * from './workload-ray.js';
export * from './workload-lws.js';
export * from './workload-kinds.js';
export * from './workload-owner.js';
export * from './workload-flavors.js';
export * from './workload-gang.js';
