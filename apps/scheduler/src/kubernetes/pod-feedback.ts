import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { eachLimited } from '#common';
import type { JobState, PendingCode } from '#core';
import { EventRecorder, PodStatusReporter, type InvolvedObject, type KubeApiError, type KubeCluster, type SubjectReport } from '#kube';

/** A job whose pods wait unbound, as Postgres has it (KubeJobStore.waitingJobs). */
export interface WaitingJob {
  id: string;
  name: string;
  state: JobState;
  pendingCode: PendingCode | null;
  pendingMessage: string | null;
  pendingPosition: number | null;
  pendingEstimatedStartAt: Date | null;
  flavor: string | null;
  admittedReplicas: number | null;
  /** Replicas asked for (an elastic gang may be admitted with fewer, down to its minimum). */
  replicas: number;
  /** Since when it waits: submission, or its latest requeue. */
  queuedAt: Date;
  /** When its current admission was made (null unless it holds one). */
  admittedAt: Date | null;
}

/**
 * How long a job may sit in a passing state — submitted and not yet looked at by a cycle, or admitted and its pods
 * being bound — before its waiting pods say so. Most jobs leave those states within a cycle or a bind, and each
 * report is a write per pod (its condition) plus Events that the API server serves while it binds them: as much
 * work as the binding itself (bench:k8s). Past this, the condition tells why they still wait.
 */
export const PASSING_STATE_QUIET_MS = 10_000;

/** `QUOTA_EXCEEDED` → `QuotaExceeded`: condition and Event reasons are CamelCase in Kubernetes. */
export function conditionReason(code: string): string {
  return code
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** `14:32 UTC` on the same UTC day as `now`, else `2026-12-03 14:32 UTC`. */
export function startTime(at: Date, now: Date): string {
  const iso = at.toISOString();
  const clock = `${iso.slice(11, 16)} UTC`;
  return iso.slice(0, 10) === now.toISOString().slice(0, 10) ? clock : `${iso.slice(0, 10)} ${clock}`;
}

/** Codes that need someone to act (the job cannot start as submitted): Warning Events. */
const NEEDS_ACTION: ReadonlySet<string> = new Set<PendingCode>(['INVALID', 'UNSATISFIABLE', 'NO_QUOTA']);

/**
 * What the waiting pods of a job show (condition PodScheduled=False) while the job is not bound:
 *   PENDING with a reason  → `<CamelCode>`: "QUOTA_EXCEEDED: team vision uses 32 of 32 nominal h100 …;
 *                            position 3 in the queue; expected to start 14:32 UTC"
 *   PENDING, not decided   → `Queued` with the requeue/preemption message kept on the job; without one, only
 *                            once it has waited PASSING_STATE_QUIET_MS for its first cycle
 *   ADMITTED / BINDING     → `Admitted`, once PASSING_STATE_QUIET_MS passed since the admission and the pods still
 *                            wait (victims leaving, pods missing); no Event: the bind handler records admission and
 *                            binding, and the binding itself sets PodScheduled=True
 * Null for states whose pods do not wait (RUNNING, ended jobs) and for those quiet moments. An elastic gang's pods
 * above its admitted replicas: elasticReplicaReport.
 */
export function waitingReport(job: WaitingJob, now: Date): SubjectReport | null {
  const quiet = (since: Date | null): boolean => since !== null && now.getTime() - since.getTime() < PASSING_STATE_QUIET_MS;
  if (job.state === 'ADMITTED' || job.state === 'BINDING') {
    if (quiet(job.admittedAt)) return null;
    const replicas = job.admittedReplicas === null ? '' : ` ${job.admittedReplicas} replica(s)`;
    return {
      status: 'False',
      reason: 'Admitted',
      message: `job ${job.name} (${job.id}) admitted by Quartermaster:${replicas} on ${job.flavor ?? 'its flavor'}; its pods are being bound`,
      event: false,
    };
  }
  if (job.state !== 'PENDING') return null;
  if (job.pendingCode === null) {
    if (!job.pendingMessage && quiet(job.queuedAt)) return null;
    return {
      status: 'False',
      reason: 'Queued',
      message: `job ${job.name} (${job.id}) waits for a scheduling cycle${job.pendingMessage ? `: ${job.pendingMessage}` : ''}`,
    };
  }
  const parts = [`${job.pendingCode}: ${job.pendingMessage ?? ''}`.trimEnd()];
  if (job.pendingPosition !== null) parts.push(`position ${job.pendingPosition} in the queue`);
  if (job.pendingEstimatedStartAt !== null) parts.push(`expected to start ${startTime(job.pendingEstimatedStartAt, now)}`);
  return {
    status: 'False',
    reason: conditionReason(job.pendingCode),
    message: parts.join('; '),
    eventType: NEEDS_ACTION.has(job.pendingCode) ? 'Warning' : 'Normal',
  };
}

/**
 * What the pods of an elastic gang admitted below its size show when they hold no replica (label
 * quartermaster.io/replica, given to the admitted ones as they are bound): null unless the job holds an
 * allocation of fewer replicas than it asked for.
 */
export function elasticReplicaReport(job: WaitingJob): SubjectReport | null {
  if (!['ADMITTED', 'BINDING', 'RUNNING'].includes(job.state) || job.admittedReplicas === null || job.admittedReplicas >= job.replicas) return null;
  return {
    status: 'False',
    reason: 'ElasticReplicaNotAdmitted',
    message:
      `job ${job.name} (${job.id}) was admitted with ${job.admittedReplicas} of ${job.replicas} replicas on ${job.flavor ?? 'its flavor'} ` +
      '(its elastic minimum was met, quota or capacity allowed no more); this pod is above them and gets no node while the gang runs: ' +
      'Quartermaster does not grow a running gang',
    eventType: 'Normal',
  };
}

/** A gang that cannot be imported: every reason, on each of its pods, as a Warning. */
export function invalidGangReport(what: string, problems: readonly string[]): SubjectReport {
  return {
    status: 'False',
    reason: 'InvalidGang',
    message: `Quartermaster cannot import ${what}: ${problems.join('; ')}. The pod waits until this is fixed`,
    eventType: 'Warning',
  };
}

/** An accelerator pod of a delegating kube-scheduler profile that names no gang, charged to no team: it is not scheduled. */
export function unchargedPodReport(refusal: string): SubjectReport {
  return {
    status: 'False',
    reason: 'NoTeam',
    message: `Quartermaster charges this accelerator pod to no team, so it is not scheduled: ${refusal}. The pod waits until this is fixed`,
    eventType: 'Warning',
  };
}

/** A gang some of whose pods are still missing (or bound elsewhere): it is imported once it is whole. */
export function incompleteGangReport(gang: string, present: number, size: number): SubjectReport {
  return {
    status: 'False',
    reason: 'WaitingForGang',
    message: `gang ${gang} has ${present} of ${size} pods unbound; Quartermaster imports it once all ${size} exist (quartermaster.io/gang-size) and none is bound`,
  };
}

/** One subject's report for a pass. `level`: how a change is logged. */
export interface FeedbackItem {
  subject: string;
  pods: readonly V1Pod[];
  report: SubjectReport;
  level: 'info' | 'warn';
  /** Other objects the subject's Events also go on (pods of another scheduler, which keep their own condition). */
  alsoOn?: readonly InvolvedObject[];
}

/** Subjects reported at once in a pass. */
const REPORT_CONCURRENCY = 8;

/**
 * Sends each pass's reports to the PodStatusReporter and logs a subject once per change of its reason
 * (not once per pass): the log and the pods tell the same story.
 */
export class PodFeedback {
  constructor(
    private readonly reporter: PodStatusReporter,
    private readonly logger: Logger,
  ) {}

  async pass(items: readonly FeedbackItem[]): Promise<void> {
    const seen = new Set(items.map((item) => item.subject));
    // Subjects are independent (their own pods and Events): a few at a time, so a pass over many gangs is not
    // one round trip after another.
    await eachLimited(items, REPORT_CONCURRENCY, async (item) => {
      const outcome = await this.reporter.report(item.subject, item.pods, item.report, item.alsoOn);
      if (outcome.changed) {
        this.logger[item.level]({ subject: item.subject, reason: item.report.reason, pods: item.pods.length, message: item.report.message }, 'waiting pods: reason changed');
      }
    });
    for (const subject of this.reporter.subjects()) if (!seen.has(subject)) this.reporter.forget(subject);
  }
}

/** Logs each distinct failure message once (a failing write retried every pass must not flood the log). */
export function onceLogger(logger: Logger, message: string): (error: KubeApiError) => void {
  const seen = new Set<string>();
  return (error) => {
    if (seen.has(error.message)) return;
    if (seen.size > 1000) seen.clear();
    seen.add(error.message);
    logger.warn({ err: error }, message);
  };
}

/** Events and pod conditions, as one process writes them. */
export function podReporting(cluster: KubeCluster, logger: Logger): { events: EventRecorder; reporter: PodStatusReporter } {
  const events = new EventRecorder(cluster, { onError: onceLogger(logger, 'cannot record a Kubernetes Event') });
  return { events, reporter: new PodStatusReporter(cluster, events, { onError: onceLogger(logger, 'cannot set a pod condition') }) };
}
