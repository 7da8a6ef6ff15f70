import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_ADMISSION, LABEL_JOB_ID, nodeRoom, replicaOfPod, nodeVerdict, type KubeCluster, type NodeVerdict, type PodStanding } from '#kube';
import type { BindTarget } from './kube-job-store.js';


/** The replica a pod holds (the label, or for a workload pod Quartermaster bound the Binding's annotation). */
export function replicaOf(pod: V1Pod): number | null {
  return replicaOfPod(pod);
}

const podName = (pod: V1Pod): string => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

/**
 * Why an imported gang can no longer run as imported, or null while every replica still has its pod,
 * alive and unbound or bound where its replica is allocated. Quartermaster cannot re-create pods it does
 * not own, so such a gang ends (see README "Imported gangs that lose a pod").
 */
export function importedGangLoss(target: Pick<BindTarget, 'allocations' | 'importedFrom'>, pods: ReadonlyMap<number, V1Pod>): string | null {
  const gang = target.importedFrom ? `${target.importedFrom.namespace}/${target.importedFrom.gang}` : '?';
  for (const { replica, node } of target.allocations) {
    const pod = pods.get(replica);
    let what: string | null = null;
    if (!pod) what = `has no pod (deleted)`;
    else if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') what = `pod ${podName(pod)} is ${pod.status.phase}`;
    else if (pod.metadata?.deletionTimestamp) what = `pod ${podName(pod)} is being deleted`;
    else if (pod.spec?.nodeName && pod.spec.nodeName !== node) what = `pod ${podName(pod)} is bound to ${pod.spec.nodeName}, not ${node}`;
    if (what) return `imported gang ${gang} lost replica ${replica}: ${what}`;
  }
  return null;
}

/** The message a lost imported gang's job ends with (FAILED). */
export function lostGangReason(loss: string): string {
  return `${loss}; Quartermaster cannot re-create pods it does not own, so the job ends and the gang's other pods are deleted (pods their owner re-creates are imported as a new job)`;
}

/**
 * How a pod found on `node` counts against binding `target` there (see PodStanding). A pod of another
 * Quartermaster job holds its share only while that job's allocation names it on this node; otherwise it
 * is on its way out (the job ended or was requeued, its `delete` is under way).
 */
export function standingFor(target: BindTarget, node: string): (pod: V1Pod) => PodStanding {
  const allocatedHere = new Set(target.allocations.filter((a) => a.node === node).map((a) => a.replica));
  return (pod) => {
    if (pod.metadata?.deletionTimestamp) return 'leaving';
    const jobId = pod.metadata?.labels?.[LABEL_JOB_ID];
    if (!jobId) return 'holds';
    const replica = replicaOf(pod);
    if (jobId.toLowerCase() === target.id.toLowerCase()) {
      // Pods Quartermaster did not create (an imported gang's, a workload's) are the job's whatever the admission.
      const current = target.importedFrom !== null || target.workload !== null || pod.metadata?.annotations?.[ANNOTATION_ADMISSION] === target.admission;
      return current && replica !== null && allocatedHere.has(replica) ? 'self' : 'leaving';
    }
    return replica !== null && target.neighbours.has(`${jobId.toLowerCase()}/${replica}/${node}`) ? 'holds' : 'leaving';
  };
}

/** A node as the node sync recorded it, in the shape nodeRoom reads (allocatable; schedulable is checked before). */
function recordedNode(row: BindTarget['nodes'][number], name: string, resourceName: string): V1Node {
  return {
    metadata: { name },
    status: {
      allocatable: { [resourceName]: String(row.accelerators), cpu: `${row.cpuMillis}m`, memory: `${row.memoryMiB}Mi` },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

/**
 * The bind-time check of DESIGN rule 1 against pods Quartermaster did not place: for every node where
 * this process binds replicas of `target`, the live pods bound there (any scheduler, any namespace) and
 * what the replicas need. Capacity and schedulability are the node sync's (Postgres); the pods are read
 * from the API server now (a LIST per node), since the scheduler's view may lag behind a pod another
 * scheduler just bound — or, for Quartermaster's own pods, from BoundPods, whose freshness the bind handler
 * proves by checking again once the pods it made are in that view.
 * Conflict on the first node that cannot take its replicas; else wait while leaving pods are in the way.
 * `podsOn` reads a node's pods: a LIST by default, or the bind handler's watched view (BoundPods).
 */
export async function checkNodes(
  cluster: KubeCluster,
  target: BindTarget,
  nodes: readonly string[],
  podsOn: (node: string) => Promise<readonly V1Pod[]> = (node) => cluster.podsOnNode(node),
): Promise<NodeVerdict & { ownStale: V1Pod[] }> {
  const resourceName = target.flavor?.resourceName ?? '';
  const ownStale: V1Pod[] = [];
  const verdicts = await Promise.all(
    nodes.map(async (node): Promise<NodeVerdict> => {
      const need = { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
      for (const a of target.allocations) {
        if (a.node !== node) continue;
        need.accelerators += a.accelerators;
        need.cpuMillis += a.cpuMillis;
        need.memoryMiB += a.memoryMiB;
      }
      const row = target.nodes.find((n) => n.name === node);
      if (!row || !row.schedulable) return { kind: 'conflict', message: `node ${node} is no longer schedulable (cordoned, not ready or removed)` };
      const pods = await podsOn(node);
      const standing = standingFor(target, node);
      // This job's own pods of an earlier admission, not being deleted yet: the caller removes them.
      for (const pod of pods) {
        if (pod.metadata?.labels?.[LABEL_JOB_ID]?.toLowerCase() === target.id.toLowerCase() && !pod.metadata.deletionTimestamp && standing(pod) === 'leaving') ownStale.push(pod);
      }
      return nodeVerdict(nodeRoom(recordedNode(row, node, resourceName), pods, resourceName, standing), need, resourceName);
    }),
  );
  const verdict = verdicts.find((v) => v.kind === 'conflict') ?? verdicts.find((v) => v.kind === 'wait') ?? { kind: 'fits' as const };
  return { ...verdict, ownStale };
}
