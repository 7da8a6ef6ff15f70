import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import {
  ANNOTATION_FLAVOR,
  ANNOTATION_GANG_SIZE,
  ANNOTATION_PRIORITY,
  LABEL_GANG,
  LABEL_JOB_ID,
  LABEL_PRIORITY_CLASS,
  LABEL_TEAM,
} from './labels.js';
import type { KubeFlavor } from './node-mapping.js';
import { podRequests } from './pod-resources.js';
import { priorityClassAsk, type PriorityClassAsk } from './priority-class-label.js';
import { acceleratorResourcesOf, draOnlyMessage, requestsResourceClaims } from './workloads/workload-flavors.js';
import { QuantityError } from './quantity.js';
import type { JobPodTemplate } from './pod-manifest.js';

/**
 * Pods created by someone else (a training operator, a user's own manifests) can ask Quartermaster to
 * treat them as one gang by annotating them:
 *   quartermaster.io/team: vision           (required)
 *   quartermaster.io/gang: llama-ft-7       (required; the gang's name, shared by its pods in a namespace)
 *   quartermaster.io/gang-size: "4"         (required; how many pods make the gang)
 *   quartermaster.io/flavor: h100-80gb      (optional; else every flavor counted in the pod's resource)
 *   quartermaster.io/priority-class: high   (optional; a priority class the team may choose, else the default
 *                                           class; also read from the label, then the pod's priorityClassName
 *                                           when a Quartermaster class has that name)
 * A numeric quartermaster.io/priority is refused: members choose classes, numbers are for admins (ADR 0022).
 * These functions turn such pods into job-shaped records (the fields of POST /v1/jobs) for the job
 * service to import. Pure: no I/O.
 */

export interface ImportedPodRef {
  namespace: string;
  name: string;
  uid: string | null;
  nodeName: string | null;
  phase: string;
}

/** One gang of foreign pods, shaped like a job submission. */
export interface GangImport {
  /** `<namespace>/<gang>`: identifies the gang across syncs. */
  key: string;
  namespace: string;
  name: string;
  team: string;
  kind: 'training';
  /** The priority class asked for (null: none, the default); the importer decides it under the team's ceiling. */
  priorityClass: PriorityClassAsk | null;
  preemptible: boolean;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  flavors: string[];
  topology: { level: 'none' };
  expectedRuntimeSeconds: null;
  template: JobPodTemplate;
  /** The pods seen so far, sorted by name. Fewer than `replicas` while the gang is still being created. */
  pods: ImportedPodRef[];
  complete: boolean;
}

export interface ImportIssue {
  /** `<namespace>/<pod name>`, or `<namespace>/<gang>` for issues of a whole gang. */
  object: string;
  field: string;
  message: string;
}

/** What one annotated pod says about its gang. */
export interface GangPodAnnotations {
  namespace: string;
  gang: string;
  team: string;
  gangSize: number;
  flavor: string | null;
  priorityClass: PriorityClassAsk | null;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; issues: ImportIssue[] };

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const INTEGER = /^-?\d+$/;

/** True when the pod asks to be imported: it carries the gang annotation and is not Quartermaster's own pod. */
export function isGangImportCandidate(pod: V1Pod): boolean {
  const annotations = pod.metadata?.annotations ?? {};
  const labels = pod.metadata?.labels ?? {};
  return LABEL_GANG in annotations && !(LABEL_JOB_ID in labels) && !(LABEL_JOB_ID in annotations);
}

/**
 * A lone accelerator pod: unbound, scheduled by a kube-scheduler profile that delegates to Quartermaster (the
 * extender), asking for a known flavor's accelerator resource, and neither a gang's (no quartermaster.io/gang)
 * nor a job's. Unless it is charged as a one-pod gang of its namespace's team (asOnePodGang), kube-scheduler
 * would place it outside every quota.
 */
export function isLoneAcceleratorPod(pod: V1Pod, flavors: readonly KubeFlavor[], delegating: ReadonlySet<string>): boolean {
  if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return false;
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return false;
  const annotations = pod.metadata?.annotations ?? {};
  if (LABEL_GANG in annotations || LABEL_JOB_ID in annotations || LABEL_JOB_ID in (pod.metadata?.labels ?? {})) return false;
  if (!delegating.has(pod.spec?.schedulerName ?? DEFAULT_KUBE_SCHEDULER)) return false;
  return acceleratorResourcesOf(pod.spec, flavors).length > 0;
}

const DEFAULT_KUBE_SCHEDULER = 'default-scheduler';

/** The gang name of a lone pod: its own name when that is a DNS label, else one derived from it. */
export function onePodGangName(pod: V1Pod): string {
  const name = pod.metadata?.name ?? '';
  return name.length <= 63 && NAME.test(name) ? name : `pod-${createHash('sha256').update(name).digest('hex').slice(0, 20)}`;
}

/** A lone accelerator pod as the annotated one-pod gang of `team` it is imported as (a copy; the pod is not changed). */
export function asOnePodGang(pod: V1Pod, team: string): V1Pod {
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      annotations: { ...(pod.metadata?.annotations ?? {}), [LABEL_TEAM]: team, [LABEL_GANG]: onePodGangName(pod), [ANNOTATION_GANG_SIZE]: '1' },
    },
  };
}

/** Reads and checks the gang annotations of one pod. */
export function parseGangAnnotations(pod: V1Pod): ParseResult<GangPodAnnotations> {
  const namespace = pod.metadata?.namespace || 'default';
  const object = `${namespace}/${pod.metadata?.name ?? '?'}`;
  const annotations = pod.metadata?.annotations ?? {};
  const issues: ImportIssue[] = [];
  const issue = (field: string, message: string): void => {
    issues.push({ object, field, message });
  };

  const read = (key: string): string | undefined => annotations[key]?.trim();
  const team = read(LABEL_TEAM) ?? pod.metadata?.labels?.[LABEL_TEAM];
  const gang = read(LABEL_GANG);
  const gangSizeText = read(ANNOTATION_GANG_SIZE);
  const flavor = read(ANNOTATION_FLAVOR);
  // Annotation first, then label (as the team); a numeric priority in either is refused.
  const mark = (key: string): string | undefined => annotations[key] ?? pod.metadata?.labels?.[key];
  const priorityClass = priorityClassAsk({
    priorityClass: mark(LABEL_PRIORITY_CLASS),
    priority: mark(ANNOTATION_PRIORITY),
    podPriorityClassName: pod.spec?.priorityClassName,
  });

  if (!team) issue(LABEL_TEAM, 'is required');
  else if (team.length > 63 || !NAME.test(team)) issue(LABEL_TEAM, `must be a DNS label, got ${JSON.stringify(team)}`);
  if (!gang) issue(LABEL_GANG, 'is required');
  else if (gang.length > 63 || !NAME.test(gang)) issue(LABEL_GANG, `must be a DNS label, got ${JSON.stringify(gang)}`);
  let gangSize = 0;
  if (gangSizeText === undefined) issue(ANNOTATION_GANG_SIZE, 'is required');
  else if (!INTEGER.test(gangSizeText) || Number(gangSizeText) < 1 || Number(gangSizeText) > 100_000) {
    issue(ANNOTATION_GANG_SIZE, `must be an integer from 1 to 100000, got ${JSON.stringify(gangSizeText)}`);
  } else gangSize = Number(gangSizeText);
  if (flavor !== undefined && (flavor.length > 63 || !NAME.test(flavor))) {
    issue(ANNOTATION_FLAVOR, `must be a DNS label, got ${JSON.stringify(flavor)}`);
  }
  if (!priorityClass.ok) issue(priorityClass.field, priorityClass.message);

  if (issues.length > 0 || !team || !gang || !priorityClass.ok) return { ok: false, issues };
  return { ok: true, value: { namespace, gang, team, gangSize, flavor: flavor ?? null, priorityClass: priorityClass.value } };
}

/** A parsed annotation as pods' disagreements show it. */
function showMark(value: string | number | PriorityClassAsk | null): string {
  if (value === null) return 'none';
  if (typeof value === 'object') return value.from === 'label' ? value.name : `${value.name} (priorityClassName)`;
  return String(value);
}

interface ParsedPod {
  pod: V1Pod;
  object: string;
  annotations: GangPodAnnotations;
}

/** The flavors a gang may use and the resource its pods count accelerators in. */
function resolveFlavors(
  first: ParsedPod,
  flavors: readonly KubeFlavor[],
): ParseResult<{ flavors: string[]; resourceName: string | null }> {
  const wanted = first.annotations.flavor;
  if (wanted !== null) {
    const flavor = flavors.find((f) => f.name === wanted);
    if (!flavor) {
      return { ok: false, issues: [{ object: first.object, field: ANNOTATION_FLAVOR, message: `unknown flavor ${JSON.stringify(wanted)}` }] };
    }
    return { ok: true, value: { flavors: [flavor.name], resourceName: flavor.resourceName } };
  }
  const containers = [...(first.pod.spec?.containers ?? []), ...(first.pod.spec?.initContainers ?? [])];
  const asked = new Set(
    containers.flatMap((c) => [...Object.keys(c.resources?.requests ?? {}), ...Object.keys(c.resources?.limits ?? {})]),
  );
  const matching = flavors.filter((f) => asked.has(f.resourceName));
  const resources = [...new Set(matching.map((f) => f.resourceName))];
  if (resources.length !== 1) {
    const message =
      resources.length === 0
        ? 'no quartermaster.io/flavor annotation and the pod requests no accelerator resource of a known flavor'
        : `no quartermaster.io/flavor annotation and the pod requests several accelerator resources (${resources.join(', ')})`;
    return { ok: false, issues: [{ object: first.object, field: ANNOTATION_FLAVOR, message }] };
  }
  return { ok: true, value: { flavors: matching.map((f) => f.name), resourceName: resources[0]! } };
}

/** The nodeSelector entries every pod of the gang has (the core then places the gang only on nodes carrying them). */
function commonNodeSelector(pods: readonly V1Pod[]): Record<string, string> {
  const [first, ...rest] = pods;
  return Object.fromEntries(Object.entries(first?.spec?.nodeSelector ?? {}).filter(([key, value]) => rest.every((pod) => pod.spec?.nodeSelector?.[key] === value)));
}

function templateOf(pod: V1Pod, cpu: number, memory: number, nodeSelector: Record<string, string> = {}): JobPodTemplate {
  const container = pod.spec?.containers?.[0];
  const env: Record<string, string> = {};
  for (const variable of container?.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
  }
  return {
    image: container?.image ?? '',
    command: container?.command ?? [],
    args: container?.args ?? [],
    env,
    cpuMillis: cpu,
    memoryMiB: memory,
    ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
  };
}

function buildGang(members: ParsedPod[], flavors: readonly KubeFlavor[]): ParseResult<GangImport> {
  const sorted = [...members].sort((a, b) => (a.object < b.object ? -1 : a.object > b.object ? 1 : 0));
  const first = sorted[0]!;
  const { namespace, gang } = first.annotations;
  const key = `${namespace}/${gang}`;
  const issues: ImportIssue[] = [];
  for (const field of ['team', 'gangSize', 'flavor', 'priorityClass'] as const) {
    const values = new Set(sorted.map((m) => showMark(m.annotations[field])));
    if (values.size > 1) {
      issues.push({ object: key, field, message: `pods of the gang disagree: ${[...values].map(String).join(' vs ')}` });
    }
  }
  if (sorted.length > first.annotations.gangSize) {
    issues.push({
      object: key,
      field: ANNOTATION_GANG_SIZE,
      message: `gang has ${sorted.length} pods but declares gang-size ${first.annotations.gangSize}`,
    });
  }
  // Devices asked for only through DRA claims: binding the pods ourselves would skip the claims' allocation.
  const dra = sorted.find((m) => requestsResourceClaims(m.pod.spec) && acceleratorResourcesOf(m.pod.spec, flavors).length === 0);
  if (dra) return { ok: false, issues: [{ object: key, field: 'spec.resourceClaims', message: draOnlyMessage(flavors) }] };
  const resolved = resolveFlavors(first, flavors);
  if (!resolved.ok) issues.push(...resolved.issues);
  if (issues.length > 0 || !resolved.ok) return { ok: false, issues };

  let requests: ReturnType<typeof podRequests>[];
  try {
    requests = sorted.map((m) => podRequests(m.pod, resolved.value.resourceName));
  } catch (error) {
    if (!(error instanceof QuantityError)) throw error;
    return { ok: false, issues: [{ object: key, field: 'resources', message: error.message }] };
  }
  const perReplica = requests[0]!;
  if (requests.some((r) => r.accelerators !== perReplica.accelerators)) {
    return {
      ok: false,
      issues: [{ object: key, field: 'resources', message: 'pods of the gang request different accelerator counts' }],
    };
  }
  const size = first.annotations.gangSize;
  return {
    ok: true,
    value: {
      key,
      namespace,
      name: gang,
      team: first.annotations.team,
      kind: 'training',
      priorityClass: first.annotations.priorityClass,
      preemptible: true,
      replicas: size,
      minReplicas: size,
      acceleratorsPerReplica: perReplica.accelerators,
      flavors: resolved.value.flavors,
      topology: { level: 'none' },
      expectedRuntimeSeconds: null,
      template: templateOf(
        first.pod,
        Math.max(...requests.map((r) => r.cpuMillis)),
        Math.max(...requests.map((r) => r.memoryMiB)),
        commonNodeSelector(sorted.map((m) => m.pod)),
      ),
      pods: sorted.map(({ pod }) => ({
        namespace,
        name: pod.metadata?.name ?? '',
        uid: pod.metadata?.uid ?? null,
        nodeName: pod.spec?.nodeName ?? null,
        phase: pod.status?.phase ?? 'Pending',
      })),
      complete: sorted.length === size,
    },
  };
}

/**
 * Groups annotated foreign pods (see isGangImportCandidate; others are ignored) into gangs by
 * namespace and gang name. A gang whose pods disagree, or that names an unknown flavor, is reported as
 * issues and not imported; a malformed pod is reported alone. Output sorted by key.
 */
export function gangImportsFromPods(
  pods: readonly V1Pod[],
  flavors: readonly KubeFlavor[],
): { gangs: GangImport[]; issues: ImportIssue[] } {
  const issues: ImportIssue[] = [];
  const byGang = new Map<string, ParsedPod[]>();
  for (const pod of pods) {
    if (!isGangImportCandidate(pod)) continue;
    const parsed = parseGangAnnotations(pod);
    if (!parsed.ok) {
      issues.push(...parsed.issues);
      continue;
    }
    const key = `${parsed.value.namespace}/${parsed.value.gang}`;
    const member: ParsedPod = { pod, object: `${parsed.value.namespace}/${pod.metadata?.name ?? '?'}`, annotations: parsed.value };
    byGang.set(key, [...(byGang.get(key) ?? []), member]);
  }
  const gangs: GangImport[] = [];
  for (const key of [...byGang.keys()].sort()) {
    const result = buildGang(byGang.get(key)!, flavors);
    if (result.ok) gangs.push(result.value);
    else issues.push(...result.issues);
  }
  return { gangs, issues };
}
