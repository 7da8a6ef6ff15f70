// The only public door of libs/kube: the @kubernetes/client-node adapter (node/pod sync, binding,
// eviction, leases) and the pure mappings between Kubernetes objects and the scheduling core's model.
export * from './labels.js';
export * from './quantity.js';
export * from './pod-resources.js';
export * from './node-mapping.js';
export * from './node-constraints.js';
export * from './node-capacity.js';
export * from './pod-manifest.js';
export * from './pod-progress.js';
export * from './rendezvous.js';
export * from './gang-import.js';
export * from './priority-class-label.js';
export * from './lease.js';
export * from './errors.js';
export * from './kube-cluster.js';
export * from './keep-alive-kubeconfig.js';
export * from './lease-store.js';
export * from './node-sync.js';
export * from './event-recorder.js';
export * from './pod-status-reporter.js';
export * from './workloads/index.js';
export * from './workload-objects.js';
