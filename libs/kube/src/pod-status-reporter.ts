import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod, type V1PodCondition } from '@kubernetes/client-node';
import { KubeApiError, apiStatusOf } from './errors.js';
import { involvedPod, type EventRecorder, type EventType, type InvolvedObject } from './event-recorder.js';
import type { KubeCluster } from './kube-cluster.js';

/** A pod condition as Quartermaster reports it (default type `PodScheduled`, as kube-scheduler writes it). */
export interface PodConditionReport {
  type?: string;
  status: 'True' | 'False' | 'Unknown';
  /** CamelCase, e.g. `QuotaExceeded`. */
  reason: string;
  message: string;
}

/** What one report says about a subject (a gang, a workload): the condition, and the Event for a change. */
export interface SubjectReport extends PodConditionReport {
  /** Type of the Event recorded when the reason changes (default Normal). No Event when `event` is false. */
  eventType?: EventType;
  /** Event reason (default: the condition's reason). */
  eventReason?: string;
  event?: boolean;
}

export interface SubjectOutcome {
  /** Pods whose condition was written (the others already showed it, or are bound or gone). */
  updated: number;
  /** True when the subject's reason differs from what it showed before (a change worth a log line). */
  changed: boolean;
}

const DEFAULT_TYPE = 'PodScheduled';

const objectKey = (object: InvolvedObject): string => `${object.kind}/${object.namespace}/${object.name}/${object.uid ?? ''}`;

/** The pod's current condition of that type, if any. */
export function conditionOf(pod: V1Pod, type = DEFAULT_TYPE): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** True when the pod already shows exactly this condition (status, reason and message). */
export function showsCondition(pod: V1Pod, report: PodConditionReport): boolean {
  const current = conditionOf(pod, report.type);
  return current !== undefined && current.status === report.status && current.reason === report.reason && current.message === report.message;
}

/**
 * Reports Quartermaster's view of waiting pods where `kubectl describe pod` shows it: a pod condition
 * (`PodScheduled=False` with a reason and message, written through the pods/status subresource, as
 * kube-scheduler does) and an Event when the reason changes. Idempotent and stateless towards the cluster:
 * a pod that already shows the condition is not written, and "the reason changed" is judged from the
 * pods' own conditions, so a restart or a second replica neither rewrites nor re-announces anything.
 * Repeats that do get recorded (a reason that comes back) are counted on one Event by the EventRecorder.
 *
 * Reusable for any workload: pass the pods of one subject (a gang, a Job's pods) and, optionally, other
 * objects the Events should also name (the owner Job or JobSet).
 */
export class PodStatusReporter {
  private readonly core: CoreV1Api;
  /** Last reason reported per subject key, for subjects whose pods cannot tell (no pod shows one yet). */
  private readonly lastReason = new Map<string, string>();
  /** Objects each subject's Event went on for its current reason. */
  private readonly told = new Map<string, Set<string>>();

  constructor(
    cluster: KubeCluster,
    private readonly events: EventRecorder,
    private readonly options: { onError?: (error: KubeApiError) => void; now?: () => Date } = {},
  ) {
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  }

  /**
   * Sets the condition on every unbound pod of the subject that does not show it yet, and records the
   * Event (on those pods and on `alsoOn`) when the subject's reason changed — and on an object that joined the
   * subject since, once. Bound pods are left alone (binding sets PodScheduled=True).
   */
  async report(subject: string, pods: readonly V1Pod[], report: SubjectReport, alsoOn: readonly InvolvedObject[] = []): Promise<SubjectOutcome> {
    const type = report.type ?? DEFAULT_TYPE;
    const waiting = pods.filter((pod) => !pod.spec?.nodeName && !pod.metadata?.deletionTimestamp);
    const previous = new Set(waiting.map((pod) => conditionOf(pod, type)?.reason).filter((r): r is string => !!r));
    const remembered = this.lastReason.get(subject);
    const changed = previous.size > 0 ? !(previous.size === 1 && previous.has(report.reason)) : remembered !== report.reason;
    this.lastReason.set(subject, report.reason);

    const stale = waiting.filter((pod) => !showsCondition(pod, { ...report, type }));
    const results = await Promise.all(stale.map((pod) => this.setCondition(pod, { ...report, type })));
    if (report.event !== false) {
      // Every object hears the subject's reason once: all of them when it changes, and one of `alsoOn` (a pod of
      // another scheduler, whose only sign of our reason is the Event) that joins the subject later — a
      // controller makes pods one by one — when it appears (our own pods get the condition). First sight of an
      // unchanged subject in this process: they were told already (by another replica, or before a restart).
      const objects = [...waiting.map(involvedPod), ...alsoOn];
      const known = this.told.get(subject);
      const fresh = changed ? objects : known ? alsoOn.filter((object) => !known.has(objectKey(object))) : [];
      const told = changed || !known ? new Set<string>() : known;
      for (const object of alsoOn) told.add(objectKey(object));
      this.told.set(subject, told);
      const eventType = report.eventType ?? 'Normal';
      const reason = report.eventReason ?? report.reason;
      await Promise.all(fresh.map((object) => this.events.record(object, eventType, reason, report.message)));
    }
    return { updated: results.filter(Boolean).length, changed };
  }

  /** Forgets a subject that is gone (its key is only kept to judge changes of pod-less subjects). */
  forget(subject: string): void {
    this.lastReason.delete(subject);
    this.told.delete(subject);
  }

  /** Known subjects (for callers that prune subjects which no longer exist). */
  subjects(): string[] {
    return [...this.lastReason.keys()];
  }

  /** Writes one condition on one pod (strategic merge on `status.conditions`, keyed by type). False when the pod is gone. */
  async setCondition(pod: V1Pod, report: PodConditionReport): Promise<boolean> {
    const type = report.type ?? DEFAULT_TYPE;
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? 'default';
    const current = conditionOf(pod, type);
    const condition: V1PodCondition = {
      type,
      status: report.status,
      reason: report.reason,
      message: report.message,
      lastTransitionTime: current && current.status === report.status && current.lastTransitionTime ? current.lastTransitionTime : (this.options.now ?? (() => new Date()))(),
    };
    try {
      await this.core.patchNamespacedPodStatus(
        { name, namespace, body: { status: { conditions: [condition] } }, fieldManager: 'quartermaster' },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      return true;
    } catch (error) {
      if (apiStatusOf(error) === 404) return false;
      this.options.onError?.(KubeApiError.from(`set condition ${type} on pod ${namespace}/${name}`, error));
      return false;
    }
  }
}
