import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { NotReadyYetError } from '#scheduling';
import {
  ANNOTATION_ADMISSION,
  ANNOTATION_REPLICA,
  ANNOTATION_SUSPENDED_BY,
  LABEL_JOB_ID,
  LABEL_REPLICA,
  PodBoundElsewhereError,
  WORKLOAD_KINDS,
  isTerminalPod,
  jobRoleName,
  replicaOfPod,
  type InvolvedObject,
  type KubeCluster,
  type WorkloadKind,
  type WorkloadObjects,
  type WorkloadRef,
} from '#kube';

/** On pods bound by another scheduler (kube-scheduler with the extender): the node the admission chose. */
const ANNOTATION_ALLOCATED_NODE = 'quartermaster.io/allocated-node';
/** On a workload's pods once imported: the workload's kind (the pods' phases do not decide its job's end). */
export const LABEL_WORKLOAD_KIND = 'quartermaster.io/workload-kind';

/** Thrown (and retried by the queue) while an admitted workload's controller has not created every pod yet. */
/** A gang's pods are not all there yet: its controller makes them; the bind looks again soon (NotReadyYetError). */
export class WaitingForWorkloadPodsError extends NotReadyYetError {}

/** A workload as the object of its Events. */
export function involvedWorkload(workload: WorkloadRef): InvolvedObject {
  return {
    apiVersion: workload.apiVersion,
    kind: workload.kind,
    namespace: workload.namespace,
    name: workload.name,
    uid: workload.uid,
  };
}

/** The workload a job stands for, from its template (`workload`, written by the workload importer). */
export function workloadOfTemplate(template: Record<string, unknown>): WorkloadRef | null {
  const w = template['workload'];
  if (typeof w !== 'object' || w === null) return null;
  const r = w as Record<string, unknown>;
  if (typeof r.kind !== 'string' || !(r.kind in WORKLOAD_KINDS)) return null;
  for (const field of ['apiVersion', 'namespace', 'name', 'uid'] as const)
    if (typeof r[field] !== 'string') return null;
  return {
    apiVersion: r.apiVersion as string,
    kind: r.kind as WorkloadKind,
    namespace: r.namespace as string,
    name: r.name as string,
    uid: r.uid as string,
  };
}

export interface WorkloadBindTarget {
  id: string;
  workload: WorkloadRef;
  /** Replica → node (and, in a multi-role job, the replica's role), from the job's allocation. */
  allocations: { replica: number; node: string; role?: string | null }[];
  /** The job's current admission (BindTarget.admission): stamped on each pod bound for it (ANNOTATION_ADMISSION). */
  admission: string;
}

/** A pod's role as the job names it (jobRoleName of what its workload's controller labelled it with), or null. */
export function jobRoleOfPod(kind: WorkloadKind, pod: V1Pod): string | null {
  const role = WORKLOAD_KINDS[kind].roleOf(pod);
  return role === null ? null : jobRoleName(role);
}

const live = (pod: V1Pod): boolean => !isTerminalPod(pod) && !pod.metadata?.deletionTimestamp;

/** Heads and leaders first (an elastic gang admitted below its size binds them before workers), then by name. */
function bindOrder(pod: V1Pod): string {
  const labels = pod.metadata?.labels ?? {};
  const first =
    labels['ray.io/node-type'] === 'head' || labels['leaderworkerset.sigs.k8s.io/worker-index'] === '0';
  return `${first ? 0 : 1}/${pod.metadata?.name ?? ''}`;
}

/**
 * Slots of an admitted workload gang: each allocated replica gets one live pod of the job. A pod keeps the
 * replica it was given (replicaOfPod); pods without one (new, or recreated by the controller after a failure) take the free
 * replicas, heads first. In a multi-role job (replicas with a role) a pod only takes a replica of its own role
 * (`roleOf`), so each pod lands where its shape was placed; a pod of no allocated role takes none. Pure.
 */
export function assignSlots(
  pods: readonly V1Pod[],
  replicas: readonly { replica: number; role?: string | null }[],
  roleOf: (pod: V1Pod) => string | null = () => null,
): { assigned: Map<number, V1Pod>; missing: number[] } {
  const assigned = new Map<number, V1Pod>();
  const roleOfReplica = new Map(replicas.map((r) => [r.replica, r.role ?? null]));
  const fits = (pod: V1Pod, replica: number): boolean => {
    const role = roleOfReplica.get(replica);
    return role === null || role === undefined || role === roleOf(pod);
  };
  const unassigned: V1Pod[] = [];
  for (const pod of [...pods].filter(live).sort((a, b) => (bindOrder(a) < bindOrder(b) ? -1 : 1))) {
    const replica = replicaOfPod(pod);
    if (replica !== null && roleOfReplica.has(replica) && !assigned.has(replica) && fits(pod, replica)) assigned.set(replica, pod);
    else unassigned.push(pod);
  }
  const free = [...roleOfReplica.keys()].filter((r) => !assigned.has(r)).sort((a, b) => a - b);
  for (const pod of unassigned) {
    const at = free.findIndex((replica) => fits(pod, replica));
    if (at < 0) continue;
    assigned.set(free[at]!, pod);
    free.splice(at, 1);
  }
  return { assigned, missing: free };
}

/**
 * Binds an admitted workload's pods, all or nothing: resumes the workload if Quartermaster suspended it (its
 * controller then recreates the pods), and once a live pod exists for every allocated replica, binds each to its
 * replica's node, the replica in the Binding's annotations (one write per pod); a pod naming another scheduler is
 * only labelled with its replica and annotated with the node: kube-scheduler binds it there, steered by the extender. Mode `admission` (the bind side effect)
 * throws WaitingForWorkloadPodsError — retried — while pods are missing. Mode `rejoin` (the importer's pass)
 * binds nothing while pods are missing and none of the gang is bound yet (the first bind is whole), and once
 * the gang has started binds what it can: a pod its controller recreates after a failure takes its
 * predecessor's replica. `check`, when given, is asked first with the nodes this call would bind to (DESIGN
 * rule 1 at bind time); false → nothing is bound.
 */
export async function bindWorkloadPods(
  cluster: KubeCluster,
  objects: WorkloadObjects,
  target: WorkloadBindTarget,
  schedulerName: string,
  mode: 'admission' | 'rejoin',
  check?: (nodes: string[]) => Promise<boolean>,
): Promise<{ bound: number; missing: number }> {
  const requireAll = mode === 'admission';
  let pods = await cluster.listPods({
    namespace: target.workload.namespace,
    labelSelector: `${LABEL_JOB_ID}=${target.id}`,
  });
  if (requireAll) {
    const current = await objects.read(target.workload);
    if (
      current?.metadata?.uid === target.workload.uid &&
      current.metadata?.annotations?.[ANNOTATION_SUSPENDED_BY]
    ) {
      // Resumed only once its controller has removed the pods of its earlier run (bound to the nodes of an earlier
      // admission, one of them perhaps gone): resumed at once, the controller may never act on the suspension.
      const earlier = pods.filter((pod) => live(pod) && pod.spec?.nodeName);
      if (earlier.length > 0) {
        throw new WaitingForWorkloadPodsError(
          `waiting for ${earlier.length} pod(s) of the earlier run of ${target.workload.kind} ${target.workload.namespace}/${target.workload.name} to go before resuming it`,
        );
      }
      await objects.setSuspended(target.workload, false);
      pods = await cluster.listPods({
        namespace: target.workload.namespace,
        labelSelector: `${LABEL_JOB_ID}=${target.id}`,
      });
    }
  }
  const { assigned, missing } = assignSlots(pods, target.allocations, (pod) => jobRoleOfPod(target.workload.kind, pod));
  if (requireAll && missing.length > 0) {
    throw new WaitingForWorkloadPodsError(
      `waiting for ${missing.length} of ${target.allocations.length} pods of ${target.workload.kind} ${target.workload.namespace}/${target.workload.name} (its controller creates them)`,
    );
  }
  const nodeOf = new Map(target.allocations.map((a) => [a.replica, a.node]));
  const started = [...assigned].some(([replica, pod]) => pod.spec?.nodeName === nodeOf.get(replica));
  if (!started && missing.length > 0) return { bound: 0, missing: missing.length };
  if (check) {
    const foreign = (pod: V1Pod): boolean => !!pod.spec?.schedulerName && pod.spec.schedulerName !== schedulerName;
    const nodes = [...assigned]
      .filter(([replica, pod]) => !foreign(pod) && pod.spec?.nodeName !== nodeOf.get(replica))
      .map(([replica]) => nodeOf.get(replica)!);
    if (nodes.length > 0 && !(await check([...new Set(nodes)]))) return { bound: 0, missing: missing.length };
  }
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  let bound = 0;
  await Promise.all(
    [...assigned].map(async ([replica, pod]) => {
      const node = nodeOf.get(replica)!;
      const name = pod.metadata!.name!;
      const namespace = pod.metadata?.namespace ?? target.workload.namespace;
      const foreign = !!pod.spec?.schedulerName && pod.spec.schedulerName !== schedulerName;
      const labels = pod.metadata?.labels ?? {};
      const annotations = pod.metadata?.annotations ?? {};
      // A pod another scheduler binds is told its replica and node by a patch (kube-scheduler binds it there, steered
      // by the extender); one Quartermaster binds gets its replica through the Binding itself — no write of its own.
      if (
        foreign &&
        (labels[LABEL_REPLICA] !== String(replica) ||
          annotations[ANNOTATION_ALLOCATED_NODE] !== node ||
          annotations[ANNOTATION_ADMISSION] !== target.admission)
      ) {
        await core.patchNamespacedPod(
          {
            name,
            namespace,
            body: {
              metadata: {
                labels: { [LABEL_REPLICA]: String(replica) },
                annotations: { [ANNOTATION_ALLOCATED_NODE]: node, [ANNOTATION_ADMISSION]: target.admission },
              },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      }
      if (pod.spec?.nodeName === node) {
        bound++;
        return;
      }
      if (foreign) return; // kube-scheduler binds it, to `node` only (the extender's filter)
      try {
        await cluster.bindPod(name, node, {
          namespace,
          uid: pod.metadata?.uid,
          annotations: { [ANNOTATION_REPLICA]: String(replica), [ANNOTATION_ADMISSION]: target.admission },
        });
        bound++;
      } catch (error) {
        if (error instanceof PodBoundElsewhereError)
          throw new Error(`${error.message}: a workload pod bound outside its gang's allocation`, {
            cause: error,
          });
        throw error;
      }
    }),
  );
  return { bound, missing: missing.length };
}

/**
 * Stops a workload gang the way its controller expects: suspend where the kind has it (Job, JobSet, TrainJob,
 * RayJob with shutdownAfterJobFinishes: the controller removes the pods and waits); else delete the child its
 * controller creates anew (another RayJob's RayCluster) and evict every pod of the gang (RayCluster,
 * LeaderWorkerSet: the controller recreates them). Either way the new pods wait for the gang's next
 * admission. Returns how it was stopped.
 */
export async function stopWorkload(
  cluster: KubeCluster,
  objects: WorkloadObjects,
  jobId: string,
  workload: WorkloadRef,
  how: 'evict' | 'delete',
  grace: { gracePeriodSeconds?: number },
): Promise<'suspended' | 'child-deleted' | 'evicted' | 'gone'> {
  const suspended = await objects.setSuspended(workload, true);
  if (suspended === 'done') return 'suspended';
  let childDeleted = false;
  const kind = WORKLOAD_KINDS[workload.kind];
  if (suspended === 'unsupported' && kind.stopChild) {
    const current = await objects.read(workload);
    const child = current?.metadata?.uid === workload.uid ? kind.stopChild(current) : null;
    // Foreground: the RayJob controller must not recreate the cluster while the old one's pods (which carry the
    // same cluster label) are still there — the new cluster would count them as its own and never make a head.
    if (child) childDeleted = await objects.delete(child, 'Foreground');
  }
  const pods = await cluster.listPods({
    namespace: workload.namespace,
    labelSelector: `${LABEL_JOB_ID}=${jobId}`,
  });
  await Promise.all(
    pods
      .filter((pod) => !isTerminalPod(pod))
      .map((pod) =>
        how === 'evict'
          ? cluster.evictPod(pod.metadata!.name!, { namespace: workload.namespace, ...grace })
          : cluster.deletePod(pod.metadata!.name!, { namespace: workload.namespace, ...grace }),
      ),
  );
  if (childDeleted) return 'child-deleted';
  return suspended === 'gone' && pods.length === 0 ? 'gone' : 'evicted';
}
