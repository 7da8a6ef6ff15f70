import type { KubeCluster } from './kube-cluster.js';
import type { LeaseState } from './lease.js';

/**
 * A coordination.k8s.io Lease as the store behind libs/scheduling's LeaderElector (same shape as its
 * LeaseStore: acquireOrRenew / release), for deployments that elect the scheduler leader through
 * Kubernetes rather than Postgres. The fencing token is the Lease's leaseTransitions + 1.
 */
export class KubeLeaseStore {
  constructor(
    private readonly cluster: KubeCluster,
    private readonly namespace: string = cluster.namespace,
  ) {}

  acquireOrRenew(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    return this.cluster.acquireOrRenewLease(name, holder, ttlMs, { namespace: this.namespace });
  }

  release(name: string, holder: string): Promise<void> {
    return this.cluster.releaseLease(name, holder, { namespace: this.namespace });
  }
}
