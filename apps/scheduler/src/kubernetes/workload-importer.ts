import { createHash } from 'node:crypto';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { envelopeOf, teamNamespaceRefusal, type JobKind } from '#core';
import type { NewJob, PriorityChoices } from '#db';
import {
  LABEL_GANG,
  LABEL_JOB_ID,
  LABEL_TEAM,
  WorkloadObjects,
  acceleratorResourcesOf,
  involvedPod,
  isTerminalPod,
  schedulerNameOf,
  workloadChain,
  workloadGang,
  type InvolvedObject,
  type KubeCluster,
  type KubeFlavor,
  type KubeObject,
  type OwnerLookup,
  type SubjectReport,
  type WorkloadGang,
  type WorkloadIssue,
  type WorkloadRef,
} from '#kube';
import { eachLimited } from '#common';
import { checkNodes } from './bind-checks.js';
import { importedPriority } from './imported-priority.js';
import { LabelledPods } from './labelled-pods.js';
import { PassLoop } from './pass-loop.js';
import type { BindTarget, KubeJobStore } from './kube-job-store.js';
import { CONFLICT_REQUEUE_MS } from './pod-side-effects.js';
import { listedUnboundPods, type UnboundPodSource } from './unbound-pods.js';
import { waitingReport, type FeedbackItem, type PodFeedback } from './pod-feedback.js';
import { LABEL_WORKLOAD_KIND, bindWorkloadPods, involvedWorkload } from './workload-pods.js';
import type { WorkloadViews } from './workload-views.js';

/** The top-level object of an owner chain as the object of Events (when it is a namespaced object with a uid). */
function involvedTop(top: KubeObject, pod: V1Pod): InvolvedObject | null {
  const name = top.metadata?.name;
  if (!name || !top.apiVersion || !top.kind) return null;
  return {
    apiVersion: top.apiVersion,
    kind: top.kind,
    namespace: top.metadata?.namespace ?? pod.metadata?.namespace ?? 'default',
    name,
    uid: top.metadata?.uid,
  };
}

/** Owner reads in flight at once in a pass. */
const READ_CONCURRENCY = 16;
/** Gangs imported at once in a pass (each: a submission, a label patch per pod, a bind-target read). */
const IMPORT_CONCURRENCY = 8;
/** Preempted workloads still waiting whose reason a pass reports on the workload (longest waiting first). */
const SUSPENDED_REPORTED_MAX = 200;
/**
 * A pass binds a BINDING gang's pods only once its admission is this old: before, its bind side effect is binding
 * them, and both at once doubled the binds (the loser's each a 409 and a read) while the API server was busiest.
 * Past it the side effect is backing off because pods were missing when it looked, and the pass binds them as soon
 * as all exist. A RUNNING gang's recreated pods are bound by the next pass.
 */
export const BIND_HANDOFF_MS = 5000;
/**
 * Owners (Jobs, JobSets, …) read by a pass are reused by the passes of this long: a gang's pods wait unbound over
 * many passes (queued, then bound), and reading every owner chain again each second was most of Quartermaster's
 * requests to the API server (bench:k8s jobsets: 2.5 workload reads per pod). A pod whose owner was replaced
 * meanwhile (uid differs) is skipped until the cache is renewed. With WorkloadViews (kubernetes-mode), workload
 * owners come from their watches instead, and only other owners (an LWS's StatefulSet) from this cache.
 */
export const OWNER_CACHE_MS = 5000;


/** What the pods (and the workload) of a gang that cannot be scheduled as it stands show. */
export function invalidWorkloadReport(what: string, issue: WorkloadIssue): SubjectReport {
  return {
    status: 'False',
    reason: issue.code === 'DRA_ONLY' ? 'DRAClaimsNotSupported' : 'InvalidWorkload',
    message: `Quartermaster cannot gang-schedule ${what}: ${issue.field}: ${issue.message}. Its pods wait until this is fixed`,
    eventType: 'Warning',
  };
}

/**
 * Pods a workload importer looks at: unbound, alive, owned by a controller, not part of an annotated gang
 * (GangImporter) and Quartermaster's — they name its scheduler, or (kube-scheduler with the extender) ask for
 * an accelerator of a known flavor.
 */
export function isWorkloadPodCandidate(
  pod: V1Pod,
  flavors: readonly KubeFlavor[],
  schedulerName: string,
): boolean {
  if (pod.spec?.nodeName || isTerminalPod(pod) || pod.metadata?.deletionTimestamp) return false;
  if (!(pod.metadata?.ownerReferences ?? []).some((r) => r.controller)) return false;
  if (pod.metadata?.annotations?.[LABEL_GANG] !== undefined) return false;
  return pod.spec?.schedulerName === schedulerName || acceleratorResourcesOf(pod.spec, flavors).length > 0;
}

/**
 * Gang-schedules the workloads teams already run (Job, JobSet, TrainJob, RayCluster/RayJob, LeaderWorkerSet).
 * Every pass (QM_KUBE_IMPORT_EVERY_MS) it looks at Quartermaster's unbound pods that have an owner, walks each
 * to its top-level workload and derives the gang from that object's spec (libs/kube workloadGang). Each gang is
 * one job — submitted once, under Idempotency-Key `kube-workload:<uid>[/<group>]`, so a requeued or recreated
 * gang is the same job — and its pods are labelled with the job id. Binding is the bind side effect's, once
 * the core admits the whole gang; a pod its controller recreates later (after a failure, or the next wave of a
 * Job) is bound here to its gang's free replica, never alone.
 */
export class WorkloadImporter {
  private readonly passes: PassLoop;
  private readonly core: CoreV1Api;
  private readonly objects: WorkloadObjects;
  private owners: { lookup: OwnerLookup; since: number } | null = null;
  /** Pods this importer labelled a moment ago (the watch may not show it yet). */
  private readonly labelled: LabelledPods;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly store: KubeJobStore,
    everyMs: number,
    private readonly onImported: () => void,
    private readonly logger: Logger,
    /** Where waiting and invalid workloads are reported (their own PodFeedback: subjects `workload:…`). */
    private readonly feedback: PodFeedback | null = null,
    private readonly now: () => Date = () => new Date(),
    /** The unbound pods of the cluster (kubernetes-mode shares one watch); by default listed every pass. */
    private readonly unbound: UnboundPodSource = listedUnboundPods(cluster),
    /** Watched workloads (kubernetes-mode shares them with the status sync); null: every owner read by a GET, cached OWNER_CACHE_MS. */
    private readonly views: WorkloadViews | null = null,
  ) {
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    this.passes = new PassLoop(() => this.runOnce(), everyMs, logger, 'workload import failed');
    this.objects = new WorkloadObjects(cluster.kubeConfig);
    this.labelled = new LabelledPods(now);
  }

  start(): void {
    this.passes.start();
  }

  /** A pass soon: a new unbound pod that may be ours (UnboundPods). */
  nudge(): void {
    this.passes.nudge();
  }

  async stop(): Promise<void> {
    await this.passes.stop();
  }

  /** One pass. Returns the ids of the jobs whose pods it saw. */
  async runOnce(): Promise<string[]> {
    const flavors = await this.store.kubeFlavors();
    const schedulerName = this.cluster.schedulerName;
    const pods = (await this.unbound()).filter((pod) => isWorkloadPodCandidate(pod, flavors, schedulerName));
    const now = this.now().getTime();
    if (!this.owners || now - this.owners.since >= OWNER_CACHE_MS) this.owners = { lookup: this.objects.cachedLookup(), since: now };
    const lookup = this.views ? this.views.lookup(this.owners.lookup) : this.owners.lookup;
    const gangs = new Map<string, { gang: WorkloadGang; pods: V1Pod[] }>();
    const items: FeedbackItem[] = [];
    const invalid = new Map<
      string,
      { what: string; issue: WorkloadIssue; pods: V1Pod[]; workload: InvolvedObject | null }
    >();
    // Owners are read concurrently (the lookup reads each one once per pass, in flight or done).
    await eachLimited(pods, READ_CONCURRENCY, async (pod) => {
      let chain;
      try {
        chain = await workloadChain(pod, lookup);
      } catch (error) {
        this.logger.warn(
          { err: error, pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` },
          'workload import: cannot read the owners of a pod',
        );
        return;
      }
      if (!chain) return;
      const result = workloadGang(chain, pod, flavors, { schedulerName });
      if (!result.ok) {
        // Under kube-scheduler a GPU pod without a team is simply not Quartermaster's; naming our scheduler, it is.
        const top = chain[chain.length - 1]!;
        const claimed =
          pod.spec?.schedulerName === schedulerName ||
          !!top.metadata?.labels?.[LABEL_TEAM] ||
          !!pod.metadata?.labels?.[LABEL_TEAM];
        if (!claimed) return;
        const what = `${top.kind} ${top.metadata?.namespace ?? pod.metadata?.namespace}/${top.metadata?.name}`;
        const entry = invalid.get(what) ?? {
          what,
          issue: result.issue,
          pods: [],
          workload: involvedTop(top, pod),
        };
        entry.pods.push(pod);
        invalid.set(what, entry);
        return;
      }
      const entry = gangs.get(result.value.key);
      if (entry) entry.pods.push(pod);
      else gangs.set(result.value.key, { gang: result.value, pods: [pod] });
    });

    const ids: string[] = [];
    const workloadOf = new Map<string, WorkloadRef>();
    // The priority classes, the teams' ceilings and namespaces: read once per pass, and only when a gang is to be submitted.
    let choices: Promise<PriorityChoices> | undefined;
    const priorityChoices = (): Promise<PriorityChoices> => (choices ??= this.store.priorityChoices());
    let namespaces: Promise<Map<string, string[]>> | undefined;
    const teamNamespaces = (): Promise<Map<string, string[]>> => (namespaces ??= this.store.teamNamespaces());
    // Gangs are imported concurrently, a bounded number at a time: each is a submission, a label per pod and a
    // bind-target read, and one after another they made a pass of 50 JobSets take ~25 s.
    await eachLimited([...gangs.values()], IMPORT_CONCURRENCY, async ({ gang, pods: members }) => {
      const what = `${gang.workload.kind} ${gang.workload.namespace}/${gang.workload.name}${gang.group === null ? '' : ` group ${gang.group}`}`;
      try {
        const outcome = await this.importGang(gang, members, priorityChoices, teamNamespaces);
        if (outcome.kind === 'issue') {
          invalid.set(what, {
            what,
            issue: outcome.issue,
            pods: members,
            workload: involvedWorkload(gang.workload),
          });
          return;
        }
        ids.push(outcome.jobId);
        workloadOf.set(outcome.jobId, gang.workload);
      } catch (error) {
        this.logger.warn(
          { err: error, workload: gang.workload },
          'workload import failed for one gang; the others go on',
        );
      }
    });

    if (this.feedback) {
      for (const { what, issue, pods: members, workload } of invalid.values()) {
        items.push(
          this.item(
            `workload:invalid:${what}`,
            members,
            invalidWorkloadReport(what, issue),
            'warn',
            workload,
          ),
        );
      }
      // The workload object of each waiting gang hears why it waits (its pods do from the GangImporter's pass) —
      // a preempted workload, suspended and without pods, too: its current reason, not only its last Preempted.
      const now = this.now();
      const waiting = [
        ...(await this.store.waitingJobs([...workloadOf.keys()])).map((job) => ({ job, workload: workloadOf.get(job.id)! })),
        ...(await this.store.preemptedWaitingWorkloads(SUSPENDED_REPORTED_MAX))
          .filter((job) => !workloadOf.has(job.id))
          .map((job) => ({ job, workload: job.workload })),
      ];
      for (const { job, workload } of waiting) {
        const report = waitingReport(job, now);
        if (report)
          items.push({
            subject: `workload:job:${job.id}`,
            pods: [],
            report,
            level: 'info',
            alsoOn: [involvedWorkload(workload)],
          });
      }
      await this.feedback.pass(items);
    } else {
      for (const { what, issue } of invalid.values())
        this.logger.warn({ workload: what, issue }, 'workload not gang-scheduled');
    }
    return ids;
  }

  /** Conditions on the pods that name Quartermaster's scheduler; Events also on the others and the workload. */
  private item(
    subject: string,
    pods: readonly V1Pod[],
    report: SubjectReport,
    level: FeedbackItem['level'],
    workload: InvolvedObject | null,
  ): FeedbackItem {
    const ours = pods.filter((pod) => schedulerNameOf(pod) === this.cluster.schedulerName);
    const others = pods.filter((pod) => schedulerNameOf(pod) !== this.cluster.schedulerName);
    return {
      subject,
      pods: ours,
      report,
      level,
      alsoOn: [...others.map(involvedPod), ...(workload ? [workload] : [])],
    };
  }

  private nodesStillFit(target: BindTarget, nodes: string[]): Promise<boolean> {
    return nodesFit(this.cluster, this.store, this.logger, target, nodes);
  }

  private async importGang(
    gang: WorkloadGang,
    pods: V1Pod[],
    priorityChoices: () => Promise<PriorityChoices>,
    teamNamespaces: () => Promise<ReadonlyMap<string, string[]>>,
  ): Promise<{ kind: 'job'; jobId: string } | { kind: 'issue'; issue: WorkloadIssue }> {
    const labelled = pods.map((p) => this.labelled.jobIdOf(p)).filter((id): id is string => !!id);
    let jobId: string;
    if (labelled.length === pods.length && new Set(labelled).size === 1) {
      jobId = labelled[0]!;
    } else {
      const key = `kube-workload:${gang.key}`;
      // Only a namespace of the team may name it (an unknown team is answered by the submission below).
      const namespaces = (await teamNamespaces()).get(gang.team);
      const elsewhere = namespaces === undefined ? null : teamNamespaceRefusal(gang.team, gang.workload.namespace, namespaces);
      if (elsewhere !== null && (await this.store.importedJobId(key)) === null) {
        return { kind: 'issue', issue: { field: LABEL_TEAM, message: elsewhere, code: 'INVALID_WORKLOAD' } };
      }
      // The class is a member's choice, under the team's ceiling (ADR 0022). A workload imported before keeps its
      // job (and the priority it was given) when its class is refused today: its recreated pods rejoin it.
      const priority = importedPriority(gang.priorityClass, gang.team, await priorityChoices());
      if (!priority.ok && (await this.store.importedJobId(key)) === null) {
        return { kind: 'issue', issue: { field: priority.field, message: priority.message, code: 'INVALID_WORKLOAD' } };
      }
      const job: NewJob = {
        name: gang.name,
        team: gang.team,
        kind: importedKind(gang.workload.kind),
        priority: priority.ok ? priority.priority : 0,
        priorityClass: priority.ok ? priority.priorityClass : null,
        preemptible: true,
        // Roles of different shapes: a multi-role job (each charged and placed as its pods ask; ADR 0024), whose
        // per-replica figures are their envelope.
        ...(gang.jobRoles === null
          ? {
              replicas: gang.replicas,
              minReplicas: gang.minReplicas,
              acceleratorsPerReplica: gang.acceleratorsPerReplica,
              cpuMillisPerReplica: gang.cpuMillisPerReplica,
              memoryMiBPerReplica: gang.memoryMiBPerReplica,
            }
          : { ...envelopeOf(gang.jobRoles), roles: gang.jobRoles }),
        flavors: gang.flavors,
        flavorSelection: 'preference',
        speeds: null,
        topologyLevel: 'none',
        tpuShape: null,
        expectedRuntimeSeconds: null,
        template: { ...gang.template, workload: gang.workload, workloadGroup: gang.group, roles: gang.roles },
      };
      const result = await this.store
        .submitter()
        .submit(job, 'kubernetes', { key, requestHash: createHash('sha256').update(key).digest('hex') });
      if (result.kind === 'unknown-references') {
        const message = result.team
          ? `team ${gang.team} does not exist`
          : `a flavor of ${gang.flavors.join(', ')} does not exist`;
        return {
          kind: 'issue',
          issue: { field: result.team ? LABEL_TEAM : 'flavors', message, code: 'INVALID_WORKLOAD' },
        };
      }
      if (result.kind === 'key-reused') throw new Error(`idempotency key ${key} names another request`);
      jobId = result.job.id;
      if (result.kind === 'created') {
        // A cycle may admit it while its pods are labelled (its bind waits for the labels): the trigger goes now,
        // not at the end of the pass — a pass of several gangs (a submission, a label per pod and a read each)
        // took 200–400 ms in bench:k8s jobsets, and a gang whose labelling failed triggered no cycle at all.
        this.onImported();
        this.logger.info(
          { workload: gang.workload, group: gang.group, jobId, replicas: gang.replicas },
          'workload imported as a job',
        );
      }
      await Promise.all(
        pods
          .filter((p) => this.labelled.jobIdOf(p) !== jobId)
          .map(async (p) => {
            await this.core.patchNamespacedPod(
              {
                name: p.metadata!.name!,
                namespace: p.metadata!.namespace!,
                body: {
                  metadata: { labels: { [LABEL_JOB_ID]: jobId, [LABEL_WORKLOAD_KIND]: gang.workload.kind } },
                },
              },
              setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
            );
            this.labelled.remember(p.metadata?.uid, jobId);
          }),
      );
    }
    // A gang whose bind side effect has been at it for BIND_HANDOFF_MS (BINDING) with unbound pods: bound here as
    // soon as every pod exists (the side effect's retries back off), and pods its controller recreates later
    // (RUNNING) join their slots — after the same bind-time check against pods of other schedulers as the side effect's.
    const target = await this.store.bindTarget(jobId);
    if (target && target.allocations.length > 0 && rejoins(target, this.now())) {
      await bindWorkloadPods(
        this.cluster,
        this.objects,
        { id: jobId, workload: target.workload ?? gang.workload, allocations: target.allocations, admission: target.admission },
        this.cluster.schedulerName,
        'rejoin',
        (nodes) => this.nodesStillFit(target, nodes),
      );
    }
    return { kind: 'job', jobId };
  }
}

/** Whether a pass binds this gang's unbound pods (see BIND_HANDOFF_MS). */
export function rejoins(target: Pick<BindTarget, 'state' | 'admission'>, now: Date): boolean {
  if (target.state === 'RUNNING') return true;
  return target.state === 'BINDING' && now.getTime() - Number(target.admission) >= BIND_HANDOFF_MS;
}

/**
 * DESIGN rule 1 at bind time (bind-checks checkNodes), for binds the importer's pass makes: true when the
 * nodes still have room for the gang's replicas; a node another scheduler filled (or cordoned) meanwhile
 * requeues the gang — its workload is stopped as its kind expects and it waits for a new placement.
 */
async function nodesFit(cluster: KubeCluster, store: KubeJobStore, logger: Logger, target: BindTarget, nodes: string[]): Promise<boolean> {
  const verdict = await checkNodes(cluster, target, nodes);
  if (verdict.kind === 'fits') return true;
  if (verdict.kind === 'conflict') {
    const reason = `placement conflict at bind time: ${verdict.message}; gang requeued`;
    if (await store.requeue(target.id, reason, { notBeforeMs: CONFLICT_REQUEUE_MS }))
      logger.info({ jobId: target.id, conflict: verdict.message }, 'workload import: allocated node taken meanwhile, gang requeued');
  }
  return false;
}

/**
 * For the extender's filter: whether a pod kube-scheduler asks about belongs to a team's workload (a Job,
 * JobSet, … with quartermaster.io/team on it or on its pods) that the importer has not labelled yet — such a
 * pod must wait, or kube-scheduler would place it alone. Workload owners come from `views` (the watches the
 * importer and the status sync share: no GET per filter call); other owners (an LWS's StatefulSet), or all of
 * them without views, by GETs cached for `ttlMs`.
 */
export function unimportedWorkloadPodCheck(
  cluster: KubeCluster,
  views: WorkloadViews | null = null,
  ttlMs = 5000,
): (pod: V1Pod) => Promise<boolean> {
  const objects = new WorkloadObjects(cluster.kubeConfig);
  let cached = objects.cachedLookup();
  let since = Date.now();
  return async (pod) => {
    if (
      pod.metadata?.labels?.[LABEL_JOB_ID] ||
      !(pod.metadata?.ownerReferences ?? []).some((r) => r.controller)
    )
      return false;
    if (Date.now() - since > ttlMs) {
      cached = objects.cachedLookup();
      since = Date.now();
    }
    const lookup = views ? views.lookup(cached) : cached;
    const chain = await workloadChain(pod, lookup).catch(() => null);
    return (
      !!chain &&
      (!!pod.metadata?.labels?.[LABEL_TEAM] || !!chain[chain.length - 1]?.metadata?.labels?.[LABEL_TEAM])
    );
  };
}

/**
 * A LeaderWorkerSet or a RayCluster serves until it is deleted: `serving`, never ending in estimates. Job,
 * JobSet, TrainJob and RayJob run to completion: `training`.
 */
export function importedKind(workloadKind: string): JobKind {
  return workloadKind === 'LeaderWorkerSet' || workloadKind === 'RayCluster' ? 'serving' : 'training';
}
