import type { Logger } from 'pino';
import type { JobOnDepartedNode } from '#db';
import { lostGangReason } from './bind-checks.js';
import type { KubeJobStore } from './kube-job-store.js';

/** Why a job on departed nodes is released (its event and pending reason). */
export function departedNodesReason(nodes: readonly string[]): string {
  return `${nodes.length === 1 ? `node ${nodes[0]}` : `nodes ${nodes.join(', ')}`} left the cluster`;
}

/**
 * NodeStoreSync's `releaseDeparted`: a gang whose Node left the cluster goes back to PENDING through the
 * transition writer (its allocation and quota released, its pods deleted or its workload stopped by the
 * `delete` side effect, which its next admission's bind waits for) and waits for a placement on the nodes that remain — in both
 * modes, and through the extender, where a controller's re-created pod would otherwise stay pinned to the departed node while the
 * job held its quota. An imported foreign gang (pods Quartermaster did not make) ends FAILED instead, as
 * when one of its pods is lost.
 */
export function releaseJobsOnDepartedNodes(store: KubeJobStore, logger: Logger): (jobs: JobOnDepartedNode[]) => Promise<void> {
  return async (jobs) => {
    for (const job of jobs) {
      const what = departedNodesReason(job.nodes);
      const changed = job.foreign
        ? (await store.transition(job.jobId, 'FAILED', lostGangReason(`imported gang: ${what}`))) === 'changed'
        : await store.requeue(job.jobId, `${what}; gang requeued`);
      if (changed) logger.info({ jobId: job.jobId, nodes: job.nodes, foreign: job.foreign }, `node sync: ${what}, ${job.foreign ? 'imported gang ended' : 'gang requeued'}`);
    }
  };
}
