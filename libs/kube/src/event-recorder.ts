import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type CoreV1Event } from '@kubernetes/client-node';
import { KubeApiError, apiStatusOf } from './errors.js';
import type { KubeCluster } from './kube-cluster.js';

/** The object an Event is about (`kubectl describe` of it lists the Event). Namespaced objects only. */
export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** `source.component` / `reportingComponent` (default `quartermaster`). */
  component?: string;
  /** `source.host` / `reportingInstance` (default: this host's name). */
  instance?: string;
  /** Called when writing an Event failed; the recorder never throws. */
  onError?: (error: KubeApiError) => void;
  now?: () => Date;
  /** How many Events to remember for counting repeats without a read (default 10,000). */
  cacheSize?: number;
}

/** Kubernetes caps an Event's message at 1 kB in events.k8s.io; keep core/v1 Events within it too. */
const MAX_MESSAGE = 1024;

/** The involved object's reference as an Event carries it. */
export function involvedPod(pod: { metadata?: { namespace?: string; name?: string; uid?: string } }): InvolvedObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
  };
}

/**
 * Name of the Event for one (object, type, reason, message): the same occurrence always gets the same name,
 * which is how repeats are deduplicated — across calls, restarts and processes — into one Event whose
 * `count` grows, as client-go's EventRecorder does.
 */
export function eventName(object: InvolvedObject, type: EventType, reason: string, message: string): string {
  const key = createHash('sha256')
    .update([object.apiVersion, object.kind, object.namespace, object.name, object.uid ?? '', type, reason, message].join('\u0000'))
    .digest('hex')
    .slice(0, 16);
  return `${object.name.slice(0, 253 - 17)}.${key}`;
}

/**
 * Writes core/v1 Events (what `kubectl describe` and `kubectl get events` show). Deduplicated: recording
 * the same (object, type, reason, message) again increments the existing Event's `count` and
 * `lastTimestamp` instead of creating another. Never throws: failures go to `onError`.
 */
export class EventRecorder {
  private readonly core: CoreV1Api;
  private readonly component: string;
  private readonly instance: string;
  private readonly now: () => Date;
  private readonly cacheSize: number;
  /** Event name → count last written by this process (a Map keeps insertion order: oldest first). */
  private readonly counts = new Map<string, number>();

  constructor(
    cluster: KubeCluster,
    private readonly options: EventRecorderOptions = {},
  ) {
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    this.component = options.component ?? 'quartermaster';
    this.instance = options.instance ?? hostname();
    this.now = options.now ?? (() => new Date());
    this.cacheSize = options.cacheSize ?? 10_000;
  }

  async record(object: InvolvedObject, type: EventType, reason: string, message: string): Promise<void> {
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const name = eventName(object, type, reason, text);
    try {
      const known = this.counts.get(name);
      if (known !== undefined && (await this.bump(object.namespace, name, known + 1))) return;
      await this.create(object, type, reason, text, name);
    } catch (error) {
      this.options.onError?.(KubeApiError.from(`record event ${reason} on ${object.kind} ${object.namespace}/${object.name}`, error));
    }
  }

  private async create(object: InvolvedObject, type: EventType, reason: string, message: string, name: string): Promise<void> {
    const now = this.now();
    const body: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: object.namespace },
      involvedObject: { ...object },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.component, host: this.instance },
      reportingComponent: this.component,
      reportingInstance: this.instance,
    };
    try {
      await this.core.createNamespacedEvent({ namespace: object.namespace, body });
      this.remember(name, 1);
    } catch (error) {
      if (apiStatusOf(error) !== 409) throw error;
      // Recorded before (by this process before a restart, or by another replica): count it.
      const existing = await this.core.readNamespacedEvent({ name, namespace: object.namespace });
      await this.bump(object.namespace, name, (existing.count ?? 1) + 1);
    }
  }

  /** Sets the Event's count and lastTimestamp; false when the Event is gone (expired: the API server keeps them an hour). */
  private async bump(namespace: string, name: string, count: number): Promise<boolean> {
    try {
      await this.core.patchNamespacedEvent(
        { name, namespace, body: { count, lastTimestamp: this.now() } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      this.remember(name, count);
      return true;
    } catch (error) {
      if (apiStatusOf(error) === 404) {
        this.counts.delete(name);
        return false;
      }
      throw error;
    }
  }

  private remember(name: string, count: number): void {
    this.counts.delete(name);
    this.counts.set(name, count);
    if (this.counts.size > this.cacheSize) this.counts.delete(this.counts.keys().next().value!);
  }
}
