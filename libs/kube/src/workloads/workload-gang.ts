import type { V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { JobRole } from '#core';
import { ANNOTATION_PRIORITY, LABEL_PRIORITY_CLASS, LABEL_TEAM } from '../labels.js';
import type { KubeFlavor } from '../node-mapping.js';
import type { JobPodTemplate } from '../pod-manifest.js';
import { podRequests } from '../pod-resources.js';
import { priorityClassAsk, type PriorityClassAsk } from '../priority-class-label.js';
import { QuantityError } from '../quantity.js';
import { acceleratorResourcesOf, draOnlyMessage, podSpecFitsFlavor, requestsResourceClaims } from './workload-flavors.js';
import { workloadKindOf } from './workload-kinds.js';
import { gangNodeSelector } from './workload-node-selector.js';
import type { KubeObject, WorkloadRef, WorkloadRole } from './workload.js';

/** Optional, on the workload or its pod template: acceptable flavors, most preferred first (`h100,a100`). */
export const ANNOTATION_FLAVORS = 'quartermaster.io/flavors';

/** One gang of a workload, shaped like a job submission (the fields of POST /v1/jobs). */
export interface WorkloadGang {
  /** `<uid>` of the workload, `<uid>/<group>` for one group of a LeaderWorkerSet: stable across requeues. */
  key: string;
  workload: WorkloadRef;
  /** The LeaderWorkerSet group index, else null. */
  group: string | null;
  /** Job name: the workload's name as a DNS label (`-<group>` appended for a group). */
  name: string;
  team: string;
  /** The priority class asked for (null: none, the default); the importer decides it under the team's ceiling. */
  priorityClass: PriorityClassAsk | null;
  replicas: number;
  minReplicas: number;
  acceleratorsPerReplica: number;
  cpuMillisPerReplica: number;
  memoryMiBPerReplica: number;
  /** The extended resource accelerators are counted in; null for a gang without accelerators. */
  resourceName: string | null;
  flavors: string[];
  /** The roles of the gang (pods per template) for display and for binding the head first. */
  roles: { name: string; count: number; minCount: number }[];
  /**
   * When its member roles ask for different shapes (a CPU-only driver beside GPU workers, actors of 2 GPUs beside
   * learners of 4, a leader with more memory): each role with its own, so that each pod is charged and placed as
   * what it asks for (a multi-role job, ADR 0024; the per-replica figures above are then their envelope). Role
   * names are jobRoleName of the workload's. Null when every member pod has the same shape.
   */
  jobRoles: JobRole[] | null;
  template: JobPodTemplate;
  /** Whether the kind is stopped by suspending it (else by evicting its pods). */
  suspendable: boolean;
}

/** Why a workload cannot be gang-scheduled; `code` DRA_ONLY marks accelerators requested only through DRA. */
export interface WorkloadIssue {
  field: string;
  message: string;
  code: 'INVALID_WORKLOAD' | 'DRA_ONLY';
}

export type GangResult = { ok: true; value: WorkloadGang } | { ok: false; issue: WorkloadIssue };

export interface WorkloadGangOptions {
  /** Pods naming this scheduler are the gang's (so are pods asking for an accelerator of a known flavor). */
  schedulerName: string;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const invalid = (field: string, message: string): GangResult => ({
  ok: false,
  issue: { field, message, code: 'INVALID_WORKLOAD' },
});

/** A DNS label (≤ 63) made from a Kubernetes object name (which may be a longer DNS subdomain). */
export function jobNameOf(name: string, group: string | null): string {
  const suffix = group === null ? '' : `-${group}`;
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 63 - suffix.length)
    .replace(/^-+|-+$/g, '');
  return `${base || 'workload'}${suffix}`;
}

/**
 * A workload's role name (a replicatedJob, a Ray group, …) as a job's role: a DNS label (lower case, other
 * characters as `-`, at most 63). The importer names roles by it and the bind matches pods to replicas by it.
 */
export function jobRoleName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .slice(0, 63)
      .replace(/^-+|-+$/g, '') || 'role'
  );
}

/** The roles when their shapes differ, else null (one uniform gang); null too when two names meet as one label. */
function multiRole(shapes: readonly JobRole[]): JobRole[] | null {
  if (shapes.length < 2) return null;
  const key = (r: JobRole): string => `${r.acceleratorsPerReplica}/${r.cpuMillisPerReplica}/${r.memoryMiBPerReplica}`;
  if (new Set(shapes.map(key)).size < 2) return null;
  if (new Set(shapes.map((r) => r.name)).size < shapes.length) return null;
  return [...shapes];
}

/** Whether pods of this template are Quartermaster's to place: they name its scheduler or ask for an accelerator it manages. */
function isMember(
  template: V1PodTemplateSpec,
  flavors: readonly KubeFlavor[],
  schedulerName: string,
): boolean {
  return (
    template.spec?.schedulerName === schedulerName ||
    acceleratorResourcesOf(template.spec, flavors).length > 0
  );
}

function templateOf(
  template: V1PodTemplateSpec,
  cpuMillis: number,
  memoryMiB: number,
  nodeSelector: Record<string, string>,
): JobPodTemplate {
  const container = template.spec?.containers?.[0];
  const env: Record<string, string> = {};
  for (const variable of container?.env ?? [])
    if (variable.value !== undefined) env[variable.name] = variable.value;
  return {
    image: container?.image ?? '',
    command: container?.command ?? [],
    args: container?.args ?? [],
    env,
    cpuMillis,
    memoryMiB,
    ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
  };
}

/**
 * The gang a pod belongs to, from its owner chain (see workloadChain: nearest owner first, the top-level
 * workload last) and the flavors Quartermaster knows:
 * - team: label quartermaster.io/team on the workload, else on the pod (its template's labels);
 * - priority class: label quartermaster.io/priority-class (workload, then pod), else the pod's priorityClassName
 *   (counted only if a Quartermaster class has that name; its numeric value never is); a numeric
 *   quartermaster.io/priority label is an issue (members choose classes: ADR 0022);
 * - size: the kind's roles (WorkloadKindSpec.roles) whose pods are Quartermaster's (they name its
 *   scheduler, or ask for an accelerator of a known flavor); workers above a minimum are elastic;
 * - per replica: the largest request of any member role (the core's replicas are uniform), for the one
 *   accelerator resource they ask for (or none);
 * - flavors: annotation quartermaster.io/flavors (workload, then pod), else every flavor counted in that
 *   resource whose node labels agree with each member role's nodeSelector and required node affinity;
 * - node selector (the job template's `nodeSelector`, by which the core places it: ADR 0017): the labels the
 *   member roles' nodeSelector and required node affinity ask for (gangNodeSelector).
 * Pure. An issue names the field and why.
 */
export function workloadGang(
  chain: readonly KubeObject[],
  pod: V1Pod,
  flavors: readonly KubeFlavor[],
  options: WorkloadGangOptions,
): GangResult {
  const top = chain[chain.length - 1];
  const kind = top ? workloadKindOf(top) : null;
  if (!top || !kind)
    return invalid('metadata.ownerReferences', 'the pod is not owned by a supported workload');
  const meta = top.metadata ?? {};
  const namespace = meta.namespace ?? pod.metadata?.namespace ?? 'default';
  const workload: WorkloadRef = {
    apiVersion: top.apiVersion ?? kind.apiVersion,
    kind: kind.kind,
    namespace,
    name: meta.name ?? '',
    uid: meta.uid ?? '',
  };
  const group = kind.groupOf ? kind.groupOf(pod) : null;
  if (kind.groupOf && group === null)
    return invalid('metadata.labels', `a ${kind.kind} pod without its group label`);

  const label = (key: string): string | undefined => meta.labels?.[key] ?? pod.metadata?.labels?.[key];
  const team = label(LABEL_TEAM)?.trim();
  if (!team) return invalid(LABEL_TEAM, `is required (a label on the ${kind.kind} or its pod template)`);
  if (team.length > 63 || !NAME.test(team))
    return invalid(LABEL_TEAM, `must be a DNS label, got ${JSON.stringify(team)}`);
  const priorityClass = priorityClassAsk({
    priorityClass: label(LABEL_PRIORITY_CLASS),
    priority: label(ANNOTATION_PRIORITY),
    podPriorityClassName: pod.spec?.priorityClassName,
  });
  if (!priorityClass.ok) return invalid(priorityClass.field, priorityClass.message);

  const derived = kind.roles(top, chain);
  if (!derived.ok) return invalid(derived.field, derived.message);
  const members: WorkloadRole[] = derived.value.filter((role) =>
    isMember(role.template, flavors, options.schedulerName),
  );
  const replicas = members.reduce((n, role) => n + role.count, 0);
  const minReplicas = Math.max(
    1,
    members.reduce((n, role) => n + role.minCount, 0),
  );
  if (replicas < 1) {
    return invalid(
      'spec',
      `the ${kind.kind} has no pods for Quartermaster (none names scheduler ${options.schedulerName} or asks for a known accelerator)`,
    );
  }

  const resources = [
    ...new Set(members.flatMap((role) => acceleratorResourcesOf(role.template.spec, flavors))),
  ].sort();
  if (resources.length > 1)
    return invalid(
      'resources',
      `pods ask for several accelerator resources (${resources.join(', ')}); a gang uses one`,
    );
  const resourceName = resources[0] ?? null;
  if (resourceName === null && members.some((role) => requestsResourceClaims(role.template.spec))) {
    return {
      ok: false,
      issue: {
        field: 'spec.resourceClaims',
        code: 'DRA_ONLY',
        message: draOnlyMessage(flavors),
      },
    };
  }

  const per = { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
  let shown = members[0]!;
  const shapes: JobRole[] = [];
  try {
    for (const role of members) {
      const r = podRequests({ spec: role.template.spec }, resourceName);
      if (role.count > 0) {
        shapes.push({
          name: jobRoleName(role.name),
          replicas: role.count,
          minReplicas: Math.max(1, Math.min(role.minCount, role.count)),
          acceleratorsPerReplica: r.accelerators,
          cpuMillisPerReplica: r.cpuMillis,
          memoryMiBPerReplica: r.memoryMiB,
        });
      }
      if (r.accelerators > per.accelerators) shown = role;
      per.accelerators = Math.max(per.accelerators, r.accelerators);
      per.cpuMillis = Math.max(per.cpuMillis, r.cpuMillis);
      per.memoryMiB = Math.max(per.memoryMiB, r.memoryMiB);
    }
  } catch (error) {
    if (error instanceof QuantityError) return invalid('resources', error.message);
    throw error;
  }

  const named = (meta.annotations?.[ANNOTATION_FLAVORS] ?? pod.metadata?.annotations?.[ANNOTATION_FLAVORS])
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let accepted: string[];
  if (named && named.length > 0) {
    const unknown = named.filter((name) => !flavors.some((f) => f.name === name));
    if (unknown.length > 0)
      return invalid(
        ANNOTATION_FLAVORS,
        `unknown flavor${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`,
      );
    const wrong = named.filter(
      (name) => resourceName !== null && flavors.find((f) => f.name === name)!.resourceName !== resourceName,
    );
    if (wrong.length > 0)
      return invalid(
        ANNOTATION_FLAVORS,
        `${wrong.join(', ')} not counted in ${resourceName}, which the pods ask for`,
      );
    // Named flavors still have to suit the pods' own node selector and affinity (their nodes are where they run).
    accepted = [...new Set(named)].filter((name) =>
      members.every((role) => podSpecFitsFlavor(role.template.spec, flavors.find((f) => f.name === name)!)),
    );
    if (accepted.length === 0)
      return invalid(ANNOTATION_FLAVORS, `${named.join(', ')}: none matches the pods’ node selector and affinity`);
  } else {
    accepted = flavors
      .filter((f) => resourceName === null || f.resourceName === resourceName)
      .filter((f) => members.every((role) => podSpecFitsFlavor(role.template.spec, f)))
      .map((f) => f.name);
    if (accepted.length === 0) {
      return invalid(
        'spec.nodeSelector',
        resourceName === null
          ? 'no flavor matches the pods’ node selector and affinity'
          : `no flavor counted in ${resourceName} matches the pods’ node selector and affinity`,
      );
    }
  }

  const selector = gangNodeSelector(
    members.map((role) => role.template.spec),
    flavors.filter((f) => accepted.includes(f.name)),
  );
  if (!selector.ok) return invalid(selector.field, selector.message);

  return {
    ok: true,
    value: {
      key: group === null ? workload.uid : `${workload.uid}/${group}`,
      workload,
      group,
      name: jobNameOf(workload.name, group),
      team,
      priorityClass: priorityClass.value,
      replicas,
      minReplicas: Math.min(minReplicas, replicas),
      acceleratorsPerReplica: per.accelerators,
      cpuMillisPerReplica: per.cpuMillis,
      memoryMiBPerReplica: per.memoryMiB,
      resourceName,
      flavors: accepted,
      roles: members.map(({ name, count, minCount }) => ({ name, count, minCount })),
      jobRoles: multiRole(shapes),
      template: templateOf(shown.template, per.cpuMillis, per.memoryMiB, selector.value),
      suspendable: kind.suspendPatch(true, top) !== null,
    },
  };
}
