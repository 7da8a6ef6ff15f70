// Kubernetes mode's SQL: bind targets and job reads, node sync, the extender's reads.
export * from './kube-jobs.repository.js';
export * from './kube-nodes.js';
export * from './extender.js';
export * from './kube-namespaces.js';
