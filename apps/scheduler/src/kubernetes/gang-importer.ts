import { createHash } from 'node:crypto';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { namespaceTeam, teamNamespaceRefusal } from '#core';
import type { NewJob, PriorityChoices } from '#db';
import {
  LABEL_GANG,
  LABEL_JOB_ID,
  LABEL_REPLICA,
  LABEL_TEAM,
  asOnePodGang,
  gangImportsFromPods,
  involvedPod,
  isGangImportCandidate,
  isLoneAcceleratorPod,
  replicaOfPod,
  schedulerNameOf,
  type GangImport,
  type KubeCluster,
  type KubeFlavor,
} from '#kube';
import { importedPriority } from './imported-priority.js';
import { LabelledPods } from './labelled-pods.js';
import { PassLoop } from './pass-loop.js';
import type { KubeJobStore } from './kube-job-store.js';
import type { UnboundPodSource } from './unbound-pods.js';
import { elasticReplicaReport, incompleteGangReport, invalidGangReport, unchargedPodReport, waitingReport, type FeedbackItem, type PodFeedback } from './pod-feedback.js';

/** Pods that wait for a node: unbound and not finished. */
const UNBOUND = 'spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed';

/** What makes a pod a lone accelerator pod of kube-scheduler's (extender mode), and which pods are a workload's instead. */
export interface LonePods {
  /** schedulerNames of the kube-scheduler profiles that delegate to Quartermaster. */
  delegating: ReadonlySet<string>;
  /** True for a pod of a team's workload (the workload importer's). */
  isWorkloadPod: (pod: V1Pod) => Promise<boolean>;
}

/** A gang that cannot become a job as it stands (its pods say why; the pass goes on with the others). */
export class GangImportError extends Error {}

const podKey = (pod: V1Pod): string => `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
const gangKeyOf = (pod: V1Pod): string => `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.annotations?.[LABEL_GANG]?.trim() ?? ''}`;

/**
 * Imports gangs of foreign pods annotated for Quartermaster (quartermaster.io/team, /gang, /gang-size,
 * optional /flavor, /priority-class — under the team's ceiling, as a member's: ADR 0022; see libs/kube
 * gang-import) as jobs: once every pod of a gang exists and
 * none is bound, the gang is submitted (Idempotency-Key `kube-import:<ns>/<gang>:<uids>`, so a crash
 * between submission and labelling imports it once) and its pods are labelled with the job id and a
 * replica index. From then on they are that job's pods: the scheduler admits the gang whole and the bind
 * handler binds these pods (none before all are placeable). Pods must name Quartermaster's scheduler.
 *
 * Every pass also tells each waiting pod why it waits (PodFeedback: condition PodScheduled=False and an
 * Event when the reason changes): a gang that cannot be imported (bad annotations, unknown team) says
 * so on its pods and is skipped — no other gang waits for it; an incomplete gang says what it misses;
 * an imported gang shows its job's pending reason, queue position and expected start.
 */
export class GangImporter {
  private readonly passes: PassLoop;
  private readonly core: CoreV1Api;
  /** Pods this importer labelled a moment ago (the watch may not show it yet). */
  private readonly labelled: LabelledPods;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly store: KubeJobStore,
    everyMs: number,
    private readonly onImported: () => void,
    private readonly logger: Logger,
    private readonly feedback: PodFeedback | null = null,
    private readonly now: () => Date = () => new Date(),
    /** The unbound pods of the cluster (kubernetes-mode shares one watch); by default listed every pass. */
    private readonly unboundPods: UnboundPodSource = () => cluster.listPods({ allNamespaces: true, fieldSelector: UNBOUND }),
    /** Lone accelerator pods of kube-scheduler's delegating profiles are imported as one-pod gangs of their namespace's team (null: left alone). */
    private readonly lonePods: LonePods | null = null,
  ) {
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    this.passes = new PassLoop(() => this.runOnce(), everyMs, logger, 'gang import failed');
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

  /** One pass: imports every complete, unbound gang, and reports on every waiting pod. Returns the job ids created or found. */
  async runOnce(): Promise<string[]> {
    const flavors: KubeFlavor[] = await this.store.kubeFlavors();
    // Only unbound pods: a gang with a bound pod is not importable anyway, and on a big cluster this list,
    // made every QM_KUBE_IMPORT_EVERY_MS by every scheduler replica, must not carry every running pod.
    // A pod labelled by the last pass counts as labelled though the watch has not shown it yet (LabelledPods):
    // its gang is not imported and patched again.
    let unbound = (await this.unboundPods())
      .filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed')
      .map((pod) => this.labelled.asLabelled(pod));
    const items: FeedbackItem[] = [];
    // The priority classes, the teams' ceilings and namespaces: read once per pass, and only when needed.
    let namespaces: Promise<Map<string, string[]>> | undefined;
    const teamNamespaces = (): Promise<Map<string, string[]>> => (namespaces ??= this.store.teamNamespaces());
    if (this.lonePods) unbound = await this.chargeLonePods(unbound, flavors, teamNamespaces, items);
    const { gangs, issues } = gangImportsFromPods(unbound, flavors);
    const candidates = unbound.filter(isGangImportCandidate);

    // Pods and gangs that cannot be imported as they stand.
    const problems = new Map<string, string[]>();
    for (const issue of issues) problems.set(issue.object, [...(problems.get(issue.object) ?? []), `${issue.field}: ${issue.message}`]);
    for (const [object, reasons] of problems) {
      const single = candidates.filter((pod) => podKey(pod) === object);
      const pods = single.length > 0 ? single : candidates.filter((pod) => gangKeyOf(pod) === object);
      const report = invalidGangReport(single.length > 0 ? `pod ${object}` : `gang ${object}`, reasons);
      // Devices only through DRA ResourceClaims: the reason workloads show too (ADR 0015).
      if (reasons.some((r) => r.startsWith('spec.resourceClaims:'))) report.reason = 'DRAClaimsNotSupported';
      items.push(this.item(`import:${object}`, pods, report, 'warn'));
    }

    const ids: string[] = [];
    let choices: Promise<PriorityChoices> | undefined;
    const priorityChoices = (): Promise<PriorityChoices> => (choices ??= this.store.priorityChoices());
    for (const gang of gangs) {
      const names = new Set(gang.pods.map((pod) => `${pod.namespace}/${pod.name}`));
      const pods = candidates.filter((pod) => names.has(podKey(pod)));
      if (!gang.complete) {
        items.push(this.item(`import:${gang.key}`, pods, incompleteGangReport(gang.key, gang.pods.length, gang.replicas), 'info'));
        continue;
      }
      try {
        ids.push(await this.importGang(gang, await priorityChoices(), await teamNamespaces()));
      } catch (error) {
        // One gang's trouble is its own: report it on its pods, go on with the others.
        items.push(this.item(`import:${gang.key}`, pods, invalidGangReport(`gang ${gang.key}`, [error instanceof Error ? error.message : String(error)]), 'warn'));
      }
    }
    if (ids.length > 0) this.onImported();

    if (this.feedback) {
      items.push(...(await this.waitingJobItems(unbound)));
      await this.feedback.pass(items);
    }
    return ids;
  }

  /**
   * Lone accelerator pods (libs/kube isLoneAcceleratorPod) that belong to no team's workload: each becomes the
   * one-pod gang of the team its namespace (or its team label there) names, imported as any gang; a pod charged
   * to no team says why on itself and stays unscheduled (the extender's filter refuses it the same way).
   */
  private async chargeLonePods(
    unbound: V1Pod[],
    flavors: readonly KubeFlavor[],
    teamNamespaces: () => Promise<Map<string, string[]>>,
    items: FeedbackItem[],
  ): Promise<V1Pod[]> {
    const lone = this.lonePods!;
    const charged: V1Pod[] = [];
    for (const pod of unbound) {
      if (!isLoneAcceleratorPod(pod, flavors, lone.delegating) || (await lone.isWorkloadPod(pod))) {
        charged.push(pod);
        continue;
      }
      const owner = namespaceTeam(pod.metadata?.namespace ?? 'default', await teamNamespaces(), pod.metadata?.labels?.[LABEL_TEAM]);
      if ('team' in owner) charged.push(asOnePodGang(pod, owner.team));
      else items.push(this.item(`import:${podKey(pod)}`, [pod], unchargedPodReport(owner.refusal), 'warn'));
    }
    return charged;
  }

  /** The pods of imported jobs that wait unbound, with what their job's state says. */
  private async waitingJobItems(unbound: readonly V1Pod[]): Promise<FeedbackItem[]> {
    const byJob = new Map<string, V1Pod[]>();
    for (const pod of unbound) {
      const jobId = pod.metadata?.labels?.[LABEL_JOB_ID];
      if (!jobId || pod.metadata?.deletionTimestamp) continue;
      byJob.set(jobId, [...(byJob.get(jobId) ?? []), pod]);
    }
    const now = this.now();
    const items: FeedbackItem[] = [];
    for (const job of await this.store.waitingJobs([...byJob.keys()])) {
      let pods = byJob.get(job.id) ?? [];
      // An elastic gang admitted below its size: once its admitted pods were given their replicas (the bind does,
      // all at once), the pods left without one are those above the admission.
      const elastic = elasticReplicaReport(job);
      const above = pods.filter((pod) => replicaOfPod(pod) === null);
      if (elastic && job.admittedReplicas !== null && above.length > 0 && above.length <= job.replicas - job.admittedReplicas) {
        items.push(this.item(`job:${job.id}:elastic`, above, elastic, 'info'));
        pods = pods.filter((pod) => replicaOfPod(pod) !== null);
      }
      const report = waitingReport(job, now);
      if (report) items.push(this.item(`job:${job.id}`, pods, report, report.eventType === 'Warning' ? 'warn' : 'info'));
    }
    return items;
  }

  /** Conditions go on pods that name Quartermaster's scheduler (kube-scheduler keeps its own on the others); Events on all. */
  private item(subject: string, pods: readonly V1Pod[], report: FeedbackItem['report'], level: FeedbackItem['level']): FeedbackItem {
    const ours = pods.filter((pod) => schedulerNameOf(pod) === this.cluster.schedulerName);
    const others = pods.filter((pod) => schedulerNameOf(pod) !== this.cluster.schedulerName);
    return { subject, pods: ours, report, level, alsoOn: others.map(involvedPod) };
  }

  private async importGang(gang: GangImport, choices: PriorityChoices, teamNamespaces: ReadonlyMap<string, string[]>): Promise<string> {
    // Only a namespace of the team may name it (an unknown team is answered by the submission below).
    const namespaces = teamNamespaces.get(gang.team);
    const elsewhere = namespaces === undefined ? null : teamNamespaceRefusal(gang.team, gang.namespace, namespaces);
    if (elsewhere !== null) throw new GangImportError(`quartermaster.io/team: ${elsewhere}`);
    // The class is a member's choice, under the team's ceiling (ADR 0022); refused, the gang says why on its pods.
    const priority = importedPriority(gang.priorityClass, gang.team, choices);
    if (!priority.ok) throw new GangImportError(`${priority.field}: ${priority.message}`);
    const job: NewJob = {
      name: gang.name,
      team: gang.team,
      kind: gang.kind,
      priority: priority.priority,
      priorityClass: priority.priorityClass,
      preemptible: gang.preemptible,
      replicas: gang.replicas,
      minReplicas: gang.minReplicas,
      acceleratorsPerReplica: gang.acceleratorsPerReplica,
      cpuMillisPerReplica: gang.template.cpuMillis ?? 0,
      memoryMiBPerReplica: gang.template.memoryMiB ?? 0,
      flavors: gang.flavors,
      flavorSelection: 'preference',
      speeds: null,
      topologyLevel: 'none',
      tpuShape: null,
      expectedRuntimeSeconds: null,
      template: { ...gang.template, importedFrom: { namespace: gang.namespace, gang: gang.name } },
    };
    const key = `kube-import:${gang.key}:${createHash('sha256').update(gang.pods.map((p) => p.uid ?? p.name).join(',')).digest('hex').slice(0, 16)}`;
    // Of the gang as asked (the class by name, not the value it has today), as REST submissions' hashes are.
    const requestHash = createHash('sha256').update(JSON.stringify({ ...job, priority: null, priorityClass: gang.priorityClass })).digest('hex');
    const result = await this.store.submitter().submit(job, 'kubernetes', { key, requestHash });
    switch (result.kind) {
      case 'created':
      case 'replayed':
        break;
      case 'unknown-references': {
        const reasons: string[] = [];
        if (result.team) reasons.push(`quartermaster.io/team: unknown team ${JSON.stringify(gang.team)} (create it with PUT /v1/teams/${gang.team}, or fix the annotation)`);
        if (result.flavors) reasons.push(`quartermaster.io/flavor: unknown flavor among ${gang.flavors.join(', ')}`);
        throw new GangImportError(reasons.join('; '));
      }
      case 'key-reused':
        throw new GangImportError(`it was imported before with other settings (job ${result.jobId}); recreate its pods`);
    }
    const jobId = result.job.id;
    await Promise.all(
      gang.pods.map(async (pod, replica) => {
        await this.core.patchNamespacedPod(
          { name: pod.name, namespace: pod.namespace, body: { metadata: { labels: { [LABEL_JOB_ID]: jobId, [LABEL_REPLICA]: String(replica) } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        this.labelled.remember(pod.uid, jobId);
      }),
    );
    this.logger.info({ gang: gang.key, jobId, replicas: gang.replicas }, 'gang imported as a job');
    return jobId;
  }
}
