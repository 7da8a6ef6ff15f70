import type { V1ObjectMeta, V1OwnerReference, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';

/**
 * Workloads are the objects ML teams already run — batch/v1 Jobs, JobSets, Kubeflow TrainJobs, KubeRay
 * RayClusters and RayJobs, LeaderWorkerSets — whose controllers create the pods. Quartermaster reads the
 * gang from the top-level object's spec (not by counting pods as they appear), stops it the way its
 * controller expects (suspend, or evict its pods) and reads completion from the controller's status.
 * One small file per kind (workload-<kind>.ts) implements WorkloadKindSpec; all pure, no I/O.
 */

/** Any Kubernetes object as JSON (typed fields of the kinds are read defensively: they are user input). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: unknown;
  status?: unknown;
}

export type WorkloadKind = 'Job' | 'JobSet' | 'TrainJob' | 'RayCluster' | 'RayJob' | 'LeaderWorkerSet';

/** Identifies the top-level object a gang comes from (shown over REST as the job's `workload`). */
export interface WorkloadRef {
  apiVersion: string;
  kind: WorkloadKind;
  namespace: string;
  name: string;
  uid: string;
}

/** Pods of one template inside a gang: `count` of them, of which at least `minCount` for an elastic start. */
export interface WorkloadRole {
  /** e.g. `worker`, a replicatedJob's name, `head`, a Ray worker group's name, `leader`. */
  name: string;
  count: number;
  minCount: number;
  template: V1PodTemplateSpec;
}

/** What a workload's controller reports: still active, or finished (its quota can be released). */
export type WorkloadStatus = { phase: 'active' } | { phase: 'succeeded' | 'failed'; message: string };

export type Derived<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

export interface WorkloadKindSpec {
  kind: WorkloadKind;
  /** `group/version` (or `v1`-style for core groups) the objects are read and patched at. */
  apiVersion: string;
  /** Lower-case plural resource name. */
  plural: string;
  /**
   * The pod roles of the gang. `chain` is the owner chain from the pod up to this object (nearest
   * first), for kinds whose pods come from a generated child (a TrainJob's JobSet).
   */
  roles(object: KubeObject, chain: readonly KubeObject[]): Derived<WorkloadRole[]>;
  status(object: KubeObject): WorkloadStatus;
  /**
   * JSON merge patch that suspends (true) or resumes (false) this workload; null when it cannot be suspended
   * — the kind has no suspend, or its controller refuses it for this object (its gang is then stopped by
   * evicting every pod, and its controller recreates them).
   */
  suspendPatch(suspend: boolean, object: KubeObject): Record<string, unknown> | null;
  /**
   * For a workload that cannot be suspended, the child object whose deletion stops it in a way its controller
   * recovers from (it creates the child anew, whose pods wait for the next admission); null or absent: its
   * pods are evicted and the controller recreates them.
   */
  stopChild?(object: KubeObject): { apiVersion: string; kind: string; namespace: string; name: string } | null;
  /**
   * For a finished workload, the child that outlives it with the gang's pods (a RayJob's RayCluster, kept when
   * shutdownAfterJobFinishes is not true, or until its TTL): while it exists the pods still hold the gang's
   * accelerators, so the job keeps its quota. Null or absent: nothing outlives the workload's end.
   */
  keptChild?(object: KubeObject): { apiVersion: string; kind: string; namespace: string; name: string } | null;
  /** For kinds made of several gangs (a LeaderWorkerSet's groups): which one a pod belongs to. */
  groupOf?(pod: V1Pod): string | null;
  /**
   * Which of `roles()` a pod of this workload is (its name there), read from the labels its controller puts on
   * it; null when the pod says nothing of it. Binding a multi-role gang gives each pod a replica of its role.
   */
  roleOf(pod: V1Pod): string | null;
}

export function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/** A non-negative integer field, `fallback` when absent; null when present but malformed. */
export function integerField(value: unknown, fallback: number): number | null {
  if (value === undefined || value === null) return fallback;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

export function podTemplate(value: unknown): V1PodTemplateSpec | null {
  const template = record(value);
  return Array.isArray(record(template.spec).containers) ? template : null;
}

/** `status.conditions[type=…]` with status True, or undefined. */
export function trueCondition(
  object: KubeObject,
  type: string,
): { reason?: string; message?: string } | undefined {
  const found = list(record(object.status).conditions)
    .map(record)
    .find((c) => c.type === type && c.status === 'True');
  return found
    ? {
        reason: typeof found.reason === 'string' ? found.reason : undefined,
        message: typeof found.message === 'string' ? found.message : undefined,
      }
    : undefined;
}

export function conditionMessage(condition: { reason?: string; message?: string }, fallback: string): string {
  return [condition.reason, condition.message].filter(Boolean).join(': ') || fallback;
}

/** The controlling owner reference (`controller: true`), or the only one. */
export function controllerOf(object: KubeObject): V1OwnerReference | null {
  const refs = object.metadata?.ownerReferences ?? [];
  return refs.find((r) => r.controller === true) ?? (refs.length === 1 ? refs[0]! : null);
}
