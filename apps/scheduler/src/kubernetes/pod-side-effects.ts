import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { podPolicyRefusals } from '#core';
import {
  ANNOTATION_ADMISSION,
  DEFAULT_MASTER_PORT,
  KubeApiError,
  LABEL_JOB_ID,
  PodBoundElsewhereError,
  PodTerminatingError,
  WorkloadObjects,
  deleteRendezvousService,
  ensureRendezvousService,
  involvedPod,
  podManifestForReplica,
  replicaOfPod,
  rendezvousServiceName,
  type EventRecorder,
  type KubeCluster,
  type Rendezvous,
} from '#kube';
import { NotReadyYetError, PermanentSideEffectError, type AnySideEffectHandler } from '#scheduling';
import type { BindTarget, KubeJobStore } from './kube-job-store.js';
import type { KubernetesSettings } from './kubernetes-settings.js';
import { checkNodes, importedGangLoss, lostGangReason, replicaOf } from './bind-checks.js';
import { BoundPods } from './bound-pods.js';
import { JobsNamespaces } from './jobs-namespaces.js';
import { podReporting } from './pod-feedback.js';
import { LABEL_WORKLOAD_KIND, bindWorkloadPods, involvedWorkload, stopWorkload } from './workload-pods.js';


const HOLDING = new Set(['ADMITTED', 'BINDING', 'RUNNING']);

/** On pods bound by another scheduler (kube-scheduler with the extender): the node the admission chose. */
export const ANNOTATION_ALLOCATED_NODE = 'quartermaster.io/allocated-node';

async function annotateAllocatedNode(cluster: KubeCluster, pod: V1Pod, node: string): Promise<void> {
  await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .patchNamespacedPod(
      { name: pod.metadata!.name!, namespace: pod.metadata?.namespace ?? cluster.namespace, body: { metadata: { annotations: { [ANNOTATION_ALLOCATED_NODE]: node } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/**
 * The preemptor waits for its victims' pods to go (each may have its grace period to checkpoint): looked at
 * again soon, without spending the queue's attempts (NotReadyYetError).
 */
export class WaitingForVictimsError extends NotReadyYetError {}

/** Pods on the allocated nodes are terminating or being removed: looked at again soon, as above. */
export class WaitingForNodeError extends NotReadyYetError {}

/**
 * The `delete` or `evict` of the job's earlier admission has not been carried out yet (a slow or stopped worker, Redis
 * down): the new admission is not bound before it, or that entry would find the job holding again and leave the old
 * admission's pods (or its running workload) to the new one. Looked at again soon, as above.
 */
export class WaitingForReleaseError extends NotReadyYetError {}

/** A placement conflict moves the gang back to the queue for this long, so the node sync catches up with what it hit. */
export const CONFLICT_REQUEUE_MS = 1000;

/** How long a bind waits for the bound-pod watch to deliver the pods it made before it checks by a LIST instead. */
export const SEEN_TIMEOUT_MS = 5000;

function isTerminal(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Pods of a job, in any namespace, by the `quartermaster.io/job-id` label. */
export function listJobPods(cluster: KubeCluster, jobId: string): Promise<V1Pod[]> {
  return cluster.listPods({ allNamespaces: true, labelSelector: `${LABEL_JOB_ID}=${jobId}` });
}


/**
 * Kubernetes-mode side effects. All idempotent: they re-read the job and the cluster and do only what is
 * missing; a retried or duplicated delivery finds the effect in place and returns.
 *
 * - `bind`: waits (by throwing NotReadyYetError, so the worker looks again soon) until a workload's `delete`/`evict`
 *   entries of its earlier admission are carried out (BindTarget.releasing), and until the admission's victims have no
 *   pod left on the nodes it was given; ends an imported gang that lost a pod (FAILED: its pods are not
 *   ours to re-create); re-checks every node it binds to against the live pods there (checkNodes):
 *   pods of other schedulers that took the room → the gang is requeued, nothing bound (never failed,
 *   never overcommitted); terminating or released pods still there → waits (throws) until they are gone.
 *   Then moves the job ADMITTED → BINDING and creates one pod per allocated replica already bound to its
 *   node (spec.nodeName: one write each), or, for an imported gang, binds its existing pods through
 *   pods/binding. Its own pods' nodes are checked from the watched view (BoundPods) before, and again once
 *   the watch has delivered the pods it made: a pod bound before them that the first check missed requeues
 *   the gang and its pods are deleted.
 *   A pod already bound there is fine; a stale pod (terminal, terminating, or bound elsewhere — left by an
 *   earlier admission) is deleted and the entry retried.
 * - `evict`: evicts every pod of the victim gang through the Eviction API, with its checkpoint grace period
 *   when it declares one, and says why on each (Preempted, or Moved for a move to a faster flavor); an
 *   imported gang then ends. A job that holds again — a move re-admits it in the same commit — loses only
 *   the pods of its earlier admission (its new admission's bind waits for them to go).
 * - `delete`: deletes every pod of a job that no longer holds an allocation; an imported gang that was
 *   requeued (gang timeout) then ends. A workload job admitted again before it ran (its bind waits for it) has
 *   its workload stopped all the same.
 * - `notify`: nothing to do in the cluster.
 */
export function kubernetesSideEffectHandlers(cluster: KubeCluster, store: KubeJobStore, settings: KubernetesSettings, logger: Logger): AnySideEffectHandler[] {
  /** The pods on each node, watched (started by the first bind): the bind checks of Quartermaster's own pods read it. */
  const bound = new BoundPods(cluster, logger);
  const grace = settings.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: settings.gracePeriodSeconds };
  const { events } = podReporting(cluster, logger);
  const objects = new WorkloadObjects(cluster.kubeConfig);
  /** Admissions whose Admitted Events this process recorded (retries of a bind do not repeat them). */
  const announced = new Set<string>();
  const namespaces = new JobsNamespaces(cluster, settings, logger);
  /** The namespace of a REST job's pods: its own (its team's at submission), else that of the jobs older than team namespaces. */
  const homeOf = (target: BindTarget | null): string => target?.namespace ?? settings.namespace;
  /** Deletes every pod of the job (with the configured grace period); how many there were. */
  const removeAll = async (jobId: string): Promise<number> => {
    const pods = await listJobPods(cluster, jobId);
    const results = await Promise.all(pods.map((pod) => cluster.deletePod(pod.metadata!.name!, { namespace: pod.metadata?.namespace ?? cluster.namespace, ...grace })));
    return results.filter((r) => r !== 'not-found').length;
  };

  /**
   * A cancel, failure or requeue committed while a bind ran: that job's `delete` may have run before the pods and
   * the Service the bind made existed, and nothing else would remove them. Re-read after making them (the
   * commit came first, so this read sees it): a job that no longer holds loses them here. One held again (a
   * new admission) keeps its Service; its bind replaces pods of the old admission.
   */
  const releasedMeanwhile = async (jobId: string, now: BindTarget | null): Promise<boolean> => {
    if (now && HOLDING.has(now.state)) return false;
    const deleted = await removeAll(jobId);
    const service = await deleteRendezvousService(cluster.kubeConfig, jobId, homeOf(now));
    logger.info({ jobId, state: now?.state, deleted, service }, 'bind: job released while its pods were made; pods and Service removed');
    return true;
  };

  return [
    {
      name: 'bind',
      close: () => bound.close(),
      handle: async ({ jobId }) => {
        const target = await store.bindTarget(jobId);
        if (!target || !HOLDING.has(target.state) || target.allocations.length === 0) {
          // An earlier attempt may have made the gang's Service after the job's `delete` ran: it goes now.
          const service = target && !target.importedFrom && !target.workload ? await deleteRendezvousService(cluster.kubeConfig, jobId, homeOf(target)) : 'not-found';
          logger.info({ jobId, state: target?.state, service }, 'bind: job no longer holds an allocation, nothing to bind');
          return;
        }
        // A workload's pods are its controller's, the same before and after: the release of its earlier admission must
        // have stopped it first. (Quartermaster's own pods carry their admission: this bind replaces an earlier one's.)
        if (target.workload && target.releasing.length > 0) {
          throw new WaitingForReleaseError(`waiting for the side effects of its earlier admission to be carried out (outbox ${target.releasing.join(', ')})`);
        }
        if (target.preemptedJobs.length > 0) await waitForVictims(cluster, target);
        // An imported gang's pods exist already: all must still be there.
        let existing: Map<number, V1Pod> | undefined;
        if (target.importedFrom) {
          existing = new Map();
          for (const pod of await listJobPods(cluster, target.id)) {
            const replica = replicaOf(pod);
            if (replica !== null) existing.set(replica, pod);
          }
          const loss = importedGangLoss(target, existing);
          if (loss) {
            const reason = lostGangReason(loss);
            for (const pod of existing.values()) await events.record(involvedPod(pod), 'Warning', 'GangLost', reason);
            await store.transition(jobId, 'FAILED', reason);
            logger.info({ jobId, loss }, 'bind: imported gang lost a pod, job ended');
            return;
          }
        }
        // DESIGN rule 1 against pods Quartermaster did not place: re-check the nodes it binds to itself.
        const ours = target.allocations.filter(({ replica }) => {
          const pod = existing?.get(replica);
          return !pod || !pod.spec?.schedulerName || pod.spec.schedulerName === settings.schedulerName;
        });
        const nodes = [...new Set(ours.map((a) => a.node))];
        // Quartermaster's own pods: checked against the watched view now, and again once the pods it made are in it
        // (BoundPods says why that keeps DESIGN rule 1). Pods it did not make (imported, a workload's): a LIST.
        const own = !target.importedFrom && !target.workload;
        const view = own && (await bound.ready()) ? (node: string): Promise<V1Pod[]> => Promise.resolve(bound.onNode(node)) : undefined;
        const verdict = await checkNodes(cluster, target, nodes, view);
        if (verdict.kind === 'wait') {
          // Pods of this job's earlier admission still on these nodes (its `delete` found it holding again): remove them.
          if (!target.importedFrom && !target.workload) {
            await Promise.all(verdict.ownStale.map((pod) => cluster.deletePod(pod.metadata!.name!, { namespace: pod.metadata?.namespace, ...(isTerminal(pod) ? grace : evictionGrace(target, grace)) })));
          }
          throw new WaitingForNodeError(verdict.message);
        }
        if (verdict.kind === 'conflict') {
          await placementConflict(store, events, target, existing, verdict.message);
          logger.info({ jobId, conflict: verdict.message }, 'bind: allocated node taken meanwhile, gang requeued');
          return;
        }
        if (target.state === 'ADMITTED') await store.advance(jobId, 'ADMITTED', 'BINDING', 'binding pods');
        if (target.workload) {
          // A Job, JobSet, … : its controller made the pods; they are bound once every one exists.
          const admission = `${jobId}:${target.admission}`;
          if (!announced.has(admission)) {
            announced.add(admission);
            if (announced.size > 10_000) announced.delete(announced.values().next().value!);
            const what = `${target.allocations.length} replica(s) × ${target.acceleratorsPerReplica} ${target.flavor?.name ?? 'accelerators'}`;
            await events.record(involvedWorkload(target.workload), 'Normal', 'Admitted', `admitted by Quartermaster as one gang: job ${target.name} (${target.id}), ${what}`);
          }
          await bindWorkloadPods(cluster, objects, { id: jobId, workload: target.workload, allocations: target.allocations, admission: target.admission }, settings.schedulerName, 'admission');
          logger.info({ jobId, workload: target.workload, replicas: target.allocations.length }, 'bind: every replica of the workload bound');
          return;
        }
        const { refused, disallowed, placed } = await bindReplicas(cluster, target, settings, grace, events, announced, existing, namespaces);
        if (disallowed) {
          // Retrying cannot help either: the job ends, no pod of it made.
          if (await releasedMeanwhile(jobId, await store.bindTarget(jobId))) return;
          await store.transition(jobId, 'FAILED', disallowed);
          logger.info({ jobId, disallowed }, 'bind: the job\'s pods may not be made (its team\'s pod policy or namespace), job failed');
          return;
        }
        // The second check's pods: once the watch delivered ours, every pod bound before them is in the view (listed
        // instead if it has not within SEEN_TIMEOUT_MS). Taken before the job is read again, so every Quartermaster
        // pod among them belongs to an admission that read sees (a neighbour's, not taken for one leaving).
        let after: Map<string, V1Pod[]> | null = null;
        if (view && !refused) {
          const fresh = await bound.seen(placed, SEEN_TIMEOUT_MS);
          after = new Map(await Promise.all(nodes.map(async (node) => [node, fresh ? bound.onNode(node) : await cluster.podsOnNode(node)] as const)));
        }
        const now = await store.bindTarget(jobId);
        if (await releasedMeanwhile(jobId, now)) return;
        if (refused) {
          // Retrying cannot help: the job ends with the API server's reason (its other pods and Service go with it).
          await store.transition(jobId, 'FAILED', `Kubernetes refused a pod of the job: ${refused}`);
          logger.info({ jobId, refused }, 'bind: a pod of the job was refused, job failed');
          return;
        }
        if (after && now && now.admission === target.admission) {
          // Anything but room for the gang beside every pod bound before ours: back to the queue, its pods deleted.
          const second = await checkNodes(cluster, now, nodes, (node) => Promise.resolve(after.get(node) ?? []));
          if (second.kind !== 'fits') {
            await store.requeue(jobId, `placement conflict found once its pods were bound: ${second.message}; gang requeued, its pods deleted`, { notBeforeMs: CONFLICT_REQUEUE_MS });
            logger.info({ jobId, conflict: second.message }, 'bind: a pod bound before ours took the room, gang requeued');
            return;
          }
        }
        logger.info({ jobId, replicas: target.allocations.length }, 'bind: every replica bound');
      },
    },
    {
      name: 'evict',
      handle: async ({ jobId, preemptorJobId }) => {
        const target = await store.bindTarget(jobId);
        const holds = target !== null && HOLDING.has(target.state);
        if (holds && target.importedFrom) {
          // Re-admitted since: the imported gang's pods are the new admission's.
          logger.info({ jobId }, 'evict: job holds again, its pods belong to the new admission');
          return;
        }
        // A workload that holds again is stopped all the same: its new admission's bind waits for this entry
        // (BindTarget.releasing), so its pods are still the earlier run's; the bind resumes it once they are gone.
        // Quartermaster's own pods: only those of the earlier admission go (below).
        const reason = (await store.evictionReason(jobId)) ?? { moved: false, message: preemptorJobId ? `preempted by job ${preemptorJobId}` : 'requeued' };
        const why = reason.message;
        // A job that checkpoints is evicted with its checkpoint grace period: the time it asked for to save its work.
        const period = evictionGrace(target, grace);
        if (target?.workload) {
          const how = await stopWorkload(cluster, objects, jobId, target.workload, 'evict', period);
          const done =
            how === 'suspended'
              ? 'suspends it (its controller removes the pods)'
              : how === 'child-deleted'
                ? 'deletes its cluster and evicts every pod of the gang (its controller creates the cluster anew)'
                : 'evicts every pod of the gang';
          await events.record(involvedWorkload(target.workload), 'Warning', 'Preempted', `Quartermaster ${done}: ${why}`);
          logger.info({ jobId, preemptorJobId, workload: target.workload, how }, 'evict: victim workload stopped');
          return;
        }
        // Held again — moved to a faster flavor in the same commit, or admitted again before this ran: only the
        // pods of its earlier admission go, with its grace period; the new admission's bind waits for them.
        const pods = (await listJobPods(cluster, jobId)).filter((pod) => !holds || pod.metadata?.annotations?.[ANNOTATION_ADMISSION] !== target.admission);
        const checkpoint = target?.checkpointGraceSeconds ? ` (given ${target.checkpointGraceSeconds} s to checkpoint)` : '';
        const [type, eventReason, message] = reason.moved
          ? (['Normal', 'Moved', `Quartermaster evicts the whole gang${checkpoint} to move it: ${why}`] as const)
          : (['Warning', 'Preempted', `Quartermaster evicts the whole gang${checkpoint}: ${why}`] as const);
        const results = await Promise.all(
          pods.map(async (pod) => {
            // Also on a pod already Terminating: the bind of a moved job may have started its eviction first.
            if (!isTerminal(pod)) await events.record(involvedPod(pod), type, eventReason, message);
            // That incarnation only: once it is gone, the new admission's pod may take its name.
            return cluster.evictPod(pod.metadata!.name!, { namespace: pod.metadata?.namespace ?? cluster.namespace, uid: pod.metadata?.uid, ...period });
          }),
        );
        const evicted = results.filter((r) => r !== 'not-found').length;
        // Its rendezvous Service goes with its pods, unless it holds again (the new admission's pods use it).
        if (!holds && !target?.importedFrom) await deleteRendezvousService(cluster.kubeConfig, jobId, homeOf(target));
        logger.info({ jobId, preemptorJobId, evicted, moved: reason.moved, holds, gracePeriodSeconds: period.gracePeriodSeconds }, 'evict: victim gang evicted');
        if (target?.importedFrom && target.state === 'PENDING') {
          await store.transition(jobId, 'FAILED', importedGangEnded(target, `was preempted (${why}) and its pods evicted`));
        }
      },
    },
    {
      name: 'delete',
      handle: async ({ jobId }) => {
        const target = await store.bindTarget(jobId);
        const holds = target !== null && HOLDING.has(target.state);
        if (holds && !target.workload) {
          // Admitted again before this ran: the imported gang's pods are the new admission's; Quartermaster's own pods
          // of the earlier admission are replaced by the new admission's bind (they carry quartermaster.io/admission).
          logger.info({ jobId }, 'delete: job holds again, its pods belong to the new admission');
          return;
        }
        // A workload admitted again before this ran is stopped all the same: its new bind waits for this entry
        // (BindTarget.releasing), so its pods are still the earlier run's; the bind resumes it once they are gone.
        if (target?.workload) {
          // Finished by its controller: nothing to stop. Cancelled or requeued: stopped as its kind expects.
          if (target.state === 'SUCCEEDED' || target.state === 'FAILED') return;
          const how = await stopWorkload(cluster, objects, jobId, target.workload, 'delete', grace);
          logger.info({ jobId, workload: target.workload, how }, 'delete: workload stopped');
          return;
        }
        const deleted = await removeAll(jobId);
        // Its rendezvous Service goes with its pods (a requeued job gets it again at its next bind).
        const service = target?.importedFrom ? 'not-found' : await deleteRendezvousService(cluster.kubeConfig, jobId, homeOf(target));
        logger.info({ jobId, deleted, service }, 'delete: pods removed');
        // Admitted again while this ran: its new bind may have found the Service just deleted. Make it again.
        const again = service === 'deleted' ? await store.bindTarget(jobId) : null;
        if (again && HOLDING.has(again.state) && !again.importedFrom && !again.workload && again.allocations.length > 1) {
          await ensureRendezvousService(cluster.kubeConfig, jobId, rendezvousOf(again, homeOf(again)));
          logger.info({ jobId }, 'delete: job admitted again meanwhile, its rendezvous Service made again');
        }
        if (target?.importedFrom && target.state === 'PENDING') {
          await store.transition(jobId, 'FAILED', importedGangEnded(target, 'was requeued and its pods deleted'));
        }
      },
    },
    { name: 'notify', handle: () => Promise.resolve() },
  ];
}

/**
 * The grace period a victim is evicted with: its checkpoint policy's, when it declares one (the kubelet sends
 * SIGTERM and waits that long before SIGKILL, so the job can write its checkpoint), else the configured one.
 */
export function evictionGrace(target: Pick<BindTarget, 'checkpointGraceSeconds'> | null, fallback: { gracePeriodSeconds?: number }): { gracePeriodSeconds?: number } {
  const declared = target?.checkpointGraceSeconds;
  return declared !== null && declared !== undefined && declared > 0 ? { gracePeriodSeconds: declared } : fallback;
}

/**
 * Victim pods that still hold capacity this admission needs: not terminal, and bound to one of its
 * nodes (or not bound yet, which evicting deletes at once). A victim pod elsewhere — stuck Terminating
 * on a dead kubelet, say — holds nothing the preemptor will use and does not hold it back; nor does an
 * unbound pod a victim workload's controller made anew after it was stopped (no replica of the old
 * admission: it waits for the victim's next one).
 */
async function waitForVictims(cluster: KubeCluster, target: BindTarget): Promise<void> {
  const ours = new Set(target.allocations.map((a) => a.node));
  const remaining: string[] = [];
  for (const victim of target.preemptedJobs) {
    const pods = await listJobPods(cluster, victim);
    for (const pod of pods) {
      const node = pod.spec?.nodeName;
      const recreated = !node && !!pod.metadata?.labels?.[LABEL_WORKLOAD_KIND] && replicaOfPod(pod) === null;
      if (!isTerminal(pod) && !recreated && (!node || ours.has(node))) remaining.push(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
    }
  }
  if (remaining.length > 0) {
    throw new WaitingForVictimsError(`waiting for ${remaining.length} pod(s) of preempted gangs to go: ${remaining.slice(0, 5).join(', ')}`);
  }
}

function admittedMessage(target: BindTarget, replica: number, node: string): string {
  const flavor = target.flavor?.name ?? 'its flavor';
  return `admitted by Quartermaster: job ${target.name} (${target.id}), ${target.allocations.length} replica(s) × ${target.acceleratorsPerReplica} ${flavor}; replica ${replica} → node ${node}`;
}

/** Why an imported gang's job ends once its pods are gone (PENDING → FAILED). */
function importedGangEnded(target: BindTarget, what: string): string {
  const gang = target.importedFrom ? `${target.importedFrom.namespace}/${target.importedFrom.gang}` : target.name;
  return `imported gang ${gang} ${what}; Quartermaster cannot re-create pods it does not own, so the job ends (pods their owner re-creates are imported as a new job)`;
}

/**
 * The allocated nodes cannot take the gang (another scheduler's pods took the room, or a node went away):
 * back to the queue, never failed, nothing bound. An imported gang keeps its pods unless some are bound
 * already (a bound pod cannot be moved: the gang then ends, as a lost one does).
 */
async function placementConflict(store: KubeJobStore, events: EventRecorder, target: BindTarget, imported: Map<number, V1Pod> | undefined, conflict: string): Promise<void> {
  const reason = `placement conflict at bind time: ${conflict}; gang requeued, nothing of it bound`;
  if (!imported) {
    await store.requeue(target.id, reason, { notBeforeMs: CONFLICT_REQUEUE_MS });
    return;
  }
  const bound = [...imported.values()].some((pod) => pod.spec?.nodeName);
  for (const pod of imported.values()) await events.record(involvedPod(pod), 'Warning', 'PlacementConflict', reason);
  if (bound) await store.transition(target.id, 'FAILED', lostGangReason(`imported gang lost its placement (${conflict}) with pods bound already`));
  else await store.requeue(target.id, reason, { deletePods: false, notBeforeMs: CONFLICT_REQUEUE_MS });
}

async function bindReplicas(
  cluster: KubeCluster,
  target: BindTarget,
  settings: KubernetesSettings,
  grace: { gracePeriodSeconds?: number },
  events: EventRecorder,
  announced: Set<string>,
  imported: Map<number, V1Pod> | undefined,
  namespaces: JobsNamespaces,
): Promise<{ refused?: string; disallowed?: string; placed: string[] }> {
  const admission = `${target.id}:${target.admission}`;
  const announce = !announced.has(admission);
  if (announce) {
    announced.add(admission);
    if (announced.size > 10_000) announced.delete(announced.values().next().value!);
  }
  // Imported gangs: their pods exist already (read by the handler). Our own jobs: createPod is idempotent (an
  // existing pod of the same job is returned), so no listing is needed on the hot path.
  const existing = imported ?? new Map<number, V1Pod>();
  const flavor = target.flavor;
  if (!flavor) throw new PermanentSideEffectError(`job ${target.id} holds an allocation but has no known flavor`);
  // Our own pods are made only from a template the team's pod policy allows now: an admin may have narrowed it
  // since the job was accepted (the API checked it then).
  const disallowed = target.importedFrom ? [] : podPolicyRefusals(target.template, target.podPolicy);
  if (disallowed.length > 0) {
    return { disallowed: `its team's pod policy no longer allows its template: ${disallowed.map((r) => `${r.field}: ${r.message}`).join('; ')}`, placed: [] };
  }
  // Our own pods go to the job's namespace: never Quartermaster's own, created if missing when allowed, else the job fails.
  const namespace = target.namespace ?? settings.namespace;
  const readiness = target.importedFrom ? { refusal: null, restricted: false } : await namespaces.prepare(namespace, target.team);
  if (readiness.refusal !== null) return { disallowed: `its pods' namespace: ${readiness.refusal}`, placed: [] };
  // Quartermaster's own multi-pod gangs rendezvous through a headless Service made before their pods.
  const rendezvous: Rendezvous | undefined = target.importedFrom ? undefined : rendezvousOf(target, namespace);
  if (rendezvous && rendezvous.replicas > 1) await ensureRendezvousService(cluster.kubeConfig, target.id, rendezvous);
  const stale: string[] = [];
  /** Uids of the gang's pods bound to their nodes (made bound, bound now, or found bound there). */
  const placed: string[] = [];
  /** The API server refused a pod of the template (a missing service account, an invalid volume, …): the job's fault. */
  const refused: string[] = [];
  const roleIndex = roleIndexes(target.allocations);
  await Promise.all(
    target.allocations.map(async ({ replica, node, role, accelerators, cpuMillis, memoryMiB }) => {
      let pod = existing.get(replica);
      if (!pod) {
        if (target.importedFrom) throw new PermanentSideEffectError(`imported gang ${target.importedFrom.namespace}/${target.importedFrom.gang} lost replica ${replica}`);
        const manifest = podManifestForReplica(
          {
            id: target.id,
            name: target.name,
            team: target.team,
            priority: target.priority,
            replicas: target.allocations.length,
            // A replica of a multi-role job asks for its own role's shape, as it was placed and charged (ADR 0024).
            ...(role === null
              ? { acceleratorsPerReplica: target.acceleratorsPerReplica, template: target.template }
              : { acceleratorsPerReplica: accelerators, template: { ...target.template, cpuMillis, memoryMiB }, role: { name: role, index: roleIndex.get(replica) ?? 0 } }),
            flavor,
            ...(target.checkpointGraceSeconds ? { terminationGracePeriodSeconds: target.checkpointGraceSeconds } : {}),
          },
          replica,
          // Created bound to its allocated node (spec.nodeName): one write where create + pods/binding were two. The
          // nodes were checked above (checkNodes), as they are before a binding; the kubelet admits it as a bound one.
          node,
          { namespace, schedulerName: settings.schedulerName, restricted: readiness.restricted, ...(rendezvous ? { rendezvous } : {}) },
        );
        manifest.metadata!.annotations = { ...manifest.metadata!.annotations, [ANNOTATION_ADMISSION]: target.admission };
        try {
          const made = await cluster.createPod(manifest);
          pod = made.pod;
          if (made.created) {
            placed.push(pod.metadata!.uid!);
            await events.record(involvedPod(pod), 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata?.namespace}/${pod.metadata?.name} to ${node} (${admittedMessage(target, replica, node)})`);
            return;
          }
        } catch (error) {
          if (error instanceof PodTerminatingError) {
            stale.push(manifest.metadata!.name!);
            return;
          }
          if (error instanceof KubeApiError && !error.retryable && error.status !== undefined && error.status !== 409) {
            refused.push(error.message);
            return;
          }
          throw error;
        }
      }
      const earlierAdmission = !target.importedFrom && pod.metadata?.annotations?.[ANNOTATION_ADMISSION] !== target.admission;
      if (earlierAdmission || isTerminal(pod) || pod.metadata?.deletionTimestamp || (pod.spec?.nodeName && pod.spec.nodeName !== node)) {
        if (target.importedFrom) {
          throw new PermanentSideEffectError(`imported pod ${pod.metadata?.namespace}/${pod.metadata?.name} is ${pod.status?.phase ?? 'gone'} or bound elsewhere`);
        }
        // Left by an earlier admission of this job: remove it, retry once it is gone. A live one gets the job's
        // checkpoint grace period, as its eviction would (a moved job's `evict` may not have run yet).
        // No uid precondition: libs/kube's deletePod sends it as a body, and the API server then ignores the
        // gracePeriodSeconds query parameter (the pod would linger Terminating for its default 30 s).
        if (!pod.metadata?.deletionTimestamp) await cluster.deletePod(pod.metadata!.name!, { namespace: pod.metadata?.namespace, ...(isTerminal(pod) ? grace : evictionGrace(target, grace)) });
        stale.push(pod.metadata!.name!);
        return;
      }
      if (pod.spec?.nodeName === node) {
        placed.push(pod.metadata!.uid!);
        return;
      }
      // Pods that existed before the admission (an imported gang) waited with a condition: say they are admitted.
      if (announce && target.importedFrom) await events.record(involvedPod(pod), 'Normal', 'Admitted', admittedMessage(target, replica, node));
      // A pod that names another scheduler (an imported gang under kube-scheduler) is bound by that
      // scheduler, which the extender steers to exactly this node.
      if (pod.spec?.schedulerName && pod.spec.schedulerName !== settings.schedulerName) {
        // Tell it (and wake it: an update requeues a pod kube-scheduler found unschedulable).
        if (pod.metadata?.annotations?.[ANNOTATION_ALLOCATED_NODE] !== node) await annotateAllocatedNode(cluster, pod, node);
        return;
      }
      try {
        const bound = await cluster.bindPod(pod.metadata!.name!, node, { namespace: pod.metadata?.namespace, uid: pod.metadata?.uid });
        placed.push(pod.metadata!.uid!);
        if (bound === 'bound') {
          const what = target.importedFrom ? `replica ${replica} of job ${target.name} (${target.id})` : admittedMessage(target, replica, node);
          await events.record(involvedPod(pod), 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata?.namespace}/${pod.metadata?.name} to ${node} (${what})`);
        }
      } catch (error) {
        if (error instanceof PodBoundElsewhereError) throw new Error(`${error.message}: retrying after removing it`, { cause: error });
        throw error;
      }
    }),
  );
  if (refused.length > 0) return { refused: refused[0]!, placed };
  if (stale.length > 0) throw new Error(`stale pods of an earlier admission are being removed (${stale.join(', ')}); binding on retry`);
  return { placed };
}

/** Each replica's index among the replicas of its role (in replica order), for a multi-role job's QM_ROLE_INDEX. */
function roleIndexes(allocations: readonly { replica: number; role: string | null }[]): Map<number, number> {
  const seen = new Map<string, number>();
  const index = new Map<number, number>();
  for (const { replica, role } of [...allocations].sort((a, b) => a.replica - b.replica)) {
    if (role === null) continue;
    const k = seen.get(role) ?? 0;
    index.set(replica, k);
    seen.set(role, k + 1);
  }
  return index;
}

/** The gang's rendezvous: its Service, the port (`MASTER_PORT` of the template's env, else torchrun's default) and size. */
function rendezvousOf(target: BindTarget, namespace: string): Rendezvous {
  const port = Number(target.template.env?.['MASTER_PORT'] ?? DEFAULT_MASTER_PORT);
  return {
    service: rendezvousServiceName(target.id),
    namespace,
    port: Number.isInteger(port) && port > 0 && port < 65536 ? port : DEFAULT_MASTER_PORT,
    replicas: target.allocations.length,
  };
}
