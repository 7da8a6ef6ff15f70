import type { V1Pod } from '@kubernetes/client-node';
import { nodeUsage, replicaDecision, type SqlHandle } from '#db';
import { LABEL_JOB_ID, LABEL_REPLICA, nodeConstraintRefusal, podRequests, type KubeCluster } from '#kube';
import {
  MAX_EXTENDER_PRIORITY,
  type ExtenderArgs,
  type ExtenderBindingArgs,
  type ExtenderBindingResult,
  type ExtenderFilterResult,
  type ExtenderPreemptionArgs,
  type ExtenderPreemptionResult,
  type HostPriority,
} from './extender-types.js';

const HOLDING = new Set(['ADMITTED', 'BINDING', 'RUNNING']);

/** Which Quartermaster job and replica a pod is, from its labels (set on our pods and on imported gangs). */
export function podIdentity(pod: V1Pod | undefined): { jobId: string; replica: number } | null {
  const labels = pod?.metadata?.labels ?? {};
  const jobId = labels[LABEL_JOB_ID];
  const replica = labels[LABEL_REPLICA];
  if (!jobId || replica === undefined || !/^\d+$/.test(replica)) return null;
  return { jobId, replica: Number(replica) };
}

/** Pods that ask to be a gang (quartermaster.io/gang annotation) but are not imported yet. */
function isUnimportedGangPod(pod: V1Pod | undefined): boolean {
  return pod?.metadata?.annotations?.['quartermaster.io/gang'] !== undefined && podIdentity(pod) === null;
}

interface Decision {
  state: string;
  pendingMessage: string | null;
  node: string | null;
  /** The namespace of the job's pods when not Quartermaster's own (a workload's, an imported gang's). */
  namespace: string | null;
}

/** Who the extender answers for: Quartermaster's own pods' namespace, and the kube-scheduler profiles that call it. */
export interface ExtenderScope {
  /** Namespace of the pods Quartermaster creates for REST jobs (QM_KUBE_NAMESPACE). */
  namespace: string;
  /** schedulerNames of the kube-scheduler profiles configured with this extender (QM_EXTENDER_SCHEDULER_NAMES). */
  delegatingSchedulers: ReadonlySet<string>;
  /** With QM_EXTENDER_UNLABELLED_ACCELERATOR_PODS=charge: whom a lone accelerator pod is charged to (it waits to be imported), or why nobody. */
  lonePods?: (pod: V1Pod) => Promise<{ team: string } | { refusal: string } | null>;
}

/**
 * The scheduler extender: kube-scheduler asks, Quartermaster's committed decisions answer. For a pod of
 * a Quartermaster gang (our pods, or imported annotated pods): filter keeps only the node the admission
 * allocated to that replica, and rejects every node while the gang is not admitted (so no gang is ever
 * partly bound); prioritize scores that node highest; bind binds only there (pods/binding, idempotent);
 * preempt lets kube-scheduler preempt nothing for them (Quartermaster preempts whole gangs itself).
 * Pods that are not Quartermaster's are kept off the accelerators admitted gangs hold (also before their
 * pods are bound: the nodes a preemption frees for its preemptor while the victims terminate), are steered
 * to the fullest nodes (packing), and may preempt only victims that are not Quartermaster pods.
 */
export class ExtenderService {
  constructor(
    private readonly db: SqlHandle,
    private readonly cluster: KubeCluster,
    /** Pods of Quartermaster jobs as the pod watch sees them (for the preempt verb's uid lookup). */
    private readonly ownPods: () => readonly V1Pod[],
    /** True for a pod of a team's workload (Job, JobSet, …) that the workload importer has not labelled yet. */
    private readonly isUnimportedWorkloadPod: (pod: V1Pod) => Promise<boolean>,
    private readonly scope: ExtenderScope,
  ) {}

  /**
   * The committed decision for a replica of `pod`'s job, or null when there is no such job — also when the
   * pod is not in the namespace of that job's pods: a label anyone can write on a pod of their own namespace
   * must not read another team's job (its state, its reason, its node) through the extender's answers.
   */
  private async decision(pod: V1Pod, jobId: string, replica: number): Promise<Decision | null> {
    const decision = await replicaDecision(this.db, jobId, replica);
    if (decision === null) return null;
    return (decision.namespace ?? this.scope.namespace) === pod.metadata?.namespace ? decision : null;
  }

  async filter(args: ExtenderArgs): Promise<ExtenderFilterResult> {
    const names = args.NodeNames ?? (args.Nodes?.items ?? []).map((n) => n.metadata?.name ?? '');
    // Every rejection is Quartermaster's decision, which no preemption by kube-scheduler can change: report
    // them as unresolvable, so kube-scheduler does not run a preemption dry-run for a waiting gang's pods.
    const result = (keep: string[], unresolvable: Record<string, string>): ExtenderFilterResult => ({
      ...(args.NodeNames || !args.Nodes ? { NodeNames: keep } : { Nodes: { ...args.Nodes, items: args.Nodes.items.filter((n) => keep.includes(n.metadata?.name ?? '')) } }),
      FailedNodes: {},
      FailedAndUnresolvableNodes: unresolvable,
      Error: '',
    });
    const rejectAll = (reason: string): ExtenderFilterResult => result([], Object.fromEntries(names.map((n) => [n, reason])));
    if (!args.Pod) return { NodeNames: [], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: 'ExtenderArgs.Pod is required' };
    if (isUnimportedGangPod(args.Pod)) return rejectAll('Quartermaster: gang not imported yet (waiting for all its pods)');
    const jobLabel = args.Pod.metadata?.labels?.[LABEL_JOB_ID];
    if (jobLabel && podIdentity(args.Pod) === null) {
      // A workload's pod: its gang's job is known, its replica is given when the whole gang is admitted.
      const decision = await this.decision(args.Pod, jobLabel, -1);
      if (!decision) return rejectAll(`Quartermaster: job ${jobLabel} is unknown in namespace ${args.Pod.metadata?.namespace ?? '?'}`);
      return rejectAll(`Quartermaster: gang ${jobLabel} is not admitted (${decision.state}${decision.pendingMessage ? `: ${decision.pendingMessage}` : ''})`);
    }
    if (!jobLabel && (await this.isUnimportedWorkloadPod(args.Pod))) return rejectAll('Quartermaster: workload gang not imported yet');
    // An accelerator pod that names no gang: charged to its namespace's team as a one-pod gang once imported, or to nobody.
    const lone = jobLabel ? null : ((await this.scope.lonePods?.(args.Pod)) ?? null);
    if (lone !== null) {
      return rejectAll('team' in lone ? `Quartermaster: not imported yet as a one-pod job of team ${lone.team} (its namespace's)` : `Quartermaster: ${lone.refusal}`);
    }
    const identity = podIdentity(args.Pod);
    if (!identity) {
      const refused = await this.heldForGangs(args.Pod, names);
      return result(names.filter((n) => !(n in refused)), refused);
    }
    const decision = await this.decision(args.Pod, identity.jobId, identity.replica);
    if (!decision) return rejectAll(`Quartermaster: job ${identity.jobId} is unknown in namespace ${args.Pod.metadata?.namespace ?? '?'}`);
    if (!HOLDING.has(decision.state) || decision.node === null) {
      return rejectAll(`Quartermaster: gang ${identity.jobId} is not admitted (${decision.state}${decision.pendingMessage ? `: ${decision.pendingMessage}` : ''})`);
    }
    const node = decision.node;
    const keep = names.filter((n) => n === node);
    const elsewhere = Object.fromEntries(names.filter((n) => n !== node).map((n) => [n, `Quartermaster: replica ${identity.replica} of gang ${identity.jobId} is allocated to ${node}`]));
    return result(keep, elsewhere);
  }

  /**
   * For a pod that is not Quartermaster's: the nodes where what admitted gangs hold leaves less than it asks,
   * with why. kube-scheduler counts bound pods only, so an admission whose pods are not bound yet would be
   * free for the taking. Unresolvable: only Quartermaster's pods could make the room, and they are not
   * kube-scheduler's to preempt. Others' pods are left to kube-scheduler's own fit check (and preemption).
   */
  private async heldForGangs(pod: V1Pod, names: string[]): Promise<Record<string, string>> {
    const refused: Record<string, string> = {};
    for (const row of await nodeUsage(this.db, names)) {
      const asks = podRequests(pod, row.resourceName).accelerators;
      if (asks > 0 && row.total - row.held < asks) {
        refused[row.name] = `Quartermaster: ${row.held} of this node's ${row.total} ${row.resourceName} are allocated to admitted gangs; the pod asks ${asks}`;
      }
    }
    return refused;
  }

  async prioritize(args: ExtenderArgs): Promise<HostPriority[]> {
    const names = args.NodeNames ?? (args.Nodes?.items ?? []).map((n) => n.metadata?.name ?? '');
    const identity = podIdentity(args.Pod);
    if (identity && args.Pod) {
      const decision = await this.decision(args.Pod, identity.jobId, identity.replica);
      return names.map((Host) => ({ Host, Score: decision?.node === Host ? MAX_EXTENDER_PRIORITY : 0 }));
    }
    // Packing: the more of a node is in use (our allocations plus others' pods), the higher its score.
    const rows = await nodeUsage(this.db, names);
    const byName = new Map(rows.map((r) => [r.name, r]));
    return names.map((Host) => {
      const row = byName.get(Host);
      const used = row ? row.held + row.external : 0;
      const score = row && row.total > 0 ? Math.round((MAX_EXTENDER_PRIORITY * Math.min(used, row.total)) / row.total) : 0;
      return { Host, Score: score };
    });
  }

  /**
   * Binds only what kube-scheduler could have asked for: a pod that exists, is not bound yet (or already to
   * this node: a retry), is scheduled by a profile that delegates to Quartermaster, asks for accelerators of
   * the node's flavor or is a replica of a Quartermaster gang, onto a node that passes filter for it — and, for a
   * pod that is not a gang's, that its own nodeSelector, required node affinity and tolerations allow. Anyone
   * else's call — a pod of another scheduler, a CPU pod onto an accelerator node, a node filter refuses, a node
   * the pod's rules exclude — is refused with the reason and binds nothing.
   */
  async bind(args: ExtenderBindingArgs): Promise<ExtenderBindingResult> {
    if (!args.PodName || !args.PodNamespace || !args.Node) return { Error: 'ExtenderBindingArgs needs PodName, PodNamespace and Node' };
    const what = `pod ${args.PodNamespace}/${args.PodName}`;
    try {
      const pod = await this.cluster.getPod(args.PodName, args.PodNamespace);
      if (!pod || (args.PodUID && pod.metadata?.uid !== args.PodUID)) return { Error: `${what} not found` };
      const bound = pod.spec?.nodeName;
      if (bound) return bound === args.Node ? { Error: '' } : { Error: `${what} is already bound to ${bound}` };
      const scheduler = pod.spec?.schedulerName ?? 'default-scheduler';
      if (!this.scope.delegatingSchedulers.has(scheduler)) {
        return { Error: `Quartermaster: ${what} is scheduled by ${scheduler}, not by a kube-scheduler profile that delegates to Quartermaster (${[...this.scope.delegatingSchedulers].join(', ')})` };
      }
      if (!podIdentity(pod)) {
        const [node] = await nodeUsage(this.db, [args.Node]);
        if (!node) return { Error: `Quartermaster: ${args.Node} is not a node Quartermaster manages` };
        if (podRequests(pod, node.resourceName).accelerators <= 0) return { Error: `Quartermaster: ${what} asks for no ${node.resourceName}; kube-scheduler binds it itself` };
        // Its own rules (nodeSelector, required node affinity, the node's taints, a cordon), as kube-scheduler's filters
        // judge them before it asks: a caller of this verb must not place it where they forbid.
        const kubeNode = await this.cluster.getNode(args.Node);
        if (!kubeNode) return { Error: `Quartermaster: node ${args.Node} not found` };
        const forbidden = nodeConstraintRefusal(pod.spec, kubeNode);
        if (forbidden !== null) return { Error: `Quartermaster: ${forbidden} (${what} was not bound to ${args.Node})` };
      }
      const filtered = await this.filter({ Pod: pod, NodeNames: [args.Node] });
      if (!filtered.NodeNames?.includes(args.Node)) {
        const reason = filtered.FailedAndUnresolvableNodes?.[args.Node] ?? filtered.FailedNodes?.[args.Node] ?? filtered.Error ?? 'filter refused it';
        return { Error: `${reason} (${what} was not bound to ${args.Node})` };
      }
      await this.cluster.bindPod(args.PodName, args.Node, { namespace: args.PodNamespace, ...(args.PodUID ? { uid: args.PodUID } : {}) });
      return { Error: '' };
    } catch (error) {
      return { Error: error instanceof Error ? error.message : String(error) };
    }
  }

  preempt(args: ExtenderPreemptionArgs): ExtenderPreemptionResult {
    if (podIdentity(args.Pod) || isUnimportedGangPod(args.Pod) || args.Pod?.metadata?.labels?.[LABEL_JOB_ID]) return { NodeNameToMetaVictims: {} };
    const ours = new Set(this.ownPods().map((p) => p.metadata?.uid).filter((uid): uid is string => !!uid));
    const meta: Record<string, { Pods: { UID: string }[]; NumPDBViolations: number }> = {};
    for (const [node, victims] of Object.entries(args.NodeNameToMetaVictims ?? {})) meta[node] = victims;
    for (const [node, victims] of Object.entries(args.NodeNameToVictims ?? {})) {
      meta[node] = { Pods: victims.Pods.map((p) => ({ UID: p.metadata?.uid ?? '' })), NumPDBViolations: victims.NumPDBViolations };
    }
    const allowed: Record<string, { Pods: { UID: string }[]; NumPDBViolations: number }> = {};
    for (const [node, victims] of Object.entries(meta)) {
      if (victims.Pods.some((p) => ours.has(p.UID))) continue;
      allowed[node] = victims;
    }
    return { NodeNameToMetaVictims: allowed };
  }
}
