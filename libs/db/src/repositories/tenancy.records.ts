/**
 * Rows of the tenancy tables as the repositories return them: the Prisma models' own fields (selected
 * columns), with the API's spelling of enums and the JSON columns typed.
 */
import { EMPTY_POD_POLICY, POD_POLICY_FIELDS, type FlavorKind as CoreFlavorKind, type PodPolicy } from '#core';
import type { Prisma } from '../generated/prisma/client.js';

export type FlavorKindName = CoreFlavorKind;

export const TEAM_SELECT = {
  name: true,
  cohort: true,
  fairShareWeight: true,
  withinTeam: true,
  reclaimWithinCohort: true,
  maxPriorityClass: true,
  maxPendingJobs: true,
  submissionsPerSecond: true,
  podPolicy: true,
  namespaces: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.TeamSelect;
export type TeamRecord = Omit<Prisma.TeamGetPayload<{ select: typeof TEAM_SELECT }>, 'podPolicy'> & {
  /** What its pod templates may reference; every list empty (nothing allowed) until an admin sets one. */
  podPolicy: PodPolicy;
};

/** The stored pod policy (null for a team never given one) as a complete PodPolicy; unknown keys are dropped. */
export function podPolicyOf(stored: unknown): PodPolicy {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return EMPTY_POD_POLICY;
  const raw = stored as Record<string, unknown>;
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return Object.fromEntries(POD_POLICY_FIELDS.map((f) => [f, list(raw[f])])) as unknown as PodPolicy;
}

/** A team row as read, with its pod policy typed. */
export const teamRecord = (row: Prisma.TeamGetPayload<{ select: typeof TEAM_SELECT }>): TeamRecord => ({ ...row, podPolicy: podPolicyOf(row.podPolicy) });

export const QUOTA_SELECT = {
  team: true,
  flavor: true,
  nominal: true,
  borrowingLimit: true,
  lendingLimit: true,
  cpuMillisLimit: true,
  memoryMiBLimit: true,
} as const satisfies Prisma.QuotaSelect;
export type QuotaRecord = Prisma.QuotaGetPayload<{ select: typeof QUOTA_SELECT }>;

export const COHORT_SELECT = {
  name: true,
  description: true,
  createdAt: true,
  updatedAt: true,
  teams: { select: { name: true }, orderBy: { name: 'asc' } },
} as const satisfies Prisma.CohortSelect;
export type CohortRecord = Omit<Prisma.CohortGetPayload<{ select: typeof COHORT_SELECT }>, 'teams'> & { members: string[] };

export const FLAVOR_SELECT = {
  name: true,
  kind: true,
  resourceName: true,
  nodeLabels: true,
  topologyLabels: true,
  memoryGiB: true,
  relativeSpeed: true,
  costPerHour: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.FlavorSelect;
export type FlavorRecord = Omit<Prisma.FlavorGetPayload<{ select: typeof FLAVOR_SELECT }>, 'kind' | 'nodeLabels' | 'topologyLabels'> & {
  kind: FlavorKindName;
  nodeLabels: Record<string, string>;
  /** Node label keys this flavor's topology is read from, per level, where they differ from the kind's defaults. */
  topologyLabels: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>>;
};

export const NODE_SELECT = {
  name: true,
  flavor: true,
  accelerators: true,
  cpuMillis: true,
  memoryMiB: true,
  zone: true,
  block: true,
  domain: true,
  tpuShape: true,
  schedulable: true,
  source: true,
  externalAccelerators: true,
  externalCpuMillis: true,
  externalMemoryMiB: true,
  labels: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.NodeSelect;
type NodePayload = Prisma.NodeGetPayload<{ select: typeof NODE_SELECT }>;
export type NodeRecord = Pick<NodePayload, 'name' | 'flavor' | 'accelerators' | 'cpuMillis' | 'memoryMiB' | 'schedulable' | 'source' | 'createdAt' | 'updatedAt'> & {
  topology: { zone?: string; block?: string; domain?: string; tpuShape?: string };
  /** Its labels: a Kubernetes Node's, or as given over REST (jobs' node selectors match them). */
  labels: Record<string, string>;
  external: { accelerators: number; cpuMillis: number; memoryMiB: number };
};

const isStringMap = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');

/** A node's topology as the API shows it: the levels it has, none as null. */
export function nodeTopology(r: Pick<NodePayload, 'zone' | 'block' | 'domain' | 'tpuShape'>): NodeRecord['topology'] {
  const topology: NodeRecord['topology'] = {};
  if (r.zone !== null) topology.zone = r.zone;
  if (r.block !== null) topology.block = r.block;
  if (r.domain !== null) topology.domain = r.domain;
  if (r.tpuShape !== null) topology.tpuShape = r.tpuShape;
  return topology;
}

export function toNodeRecord(r: NodePayload): NodeRecord {
  const topology = nodeTopology(r);
  return {
    name: r.name,
    flavor: r.flavor,
    accelerators: r.accelerators,
    cpuMillis: r.cpuMillis,
    memoryMiB: r.memoryMiB,
    topology,
    labels: isStringMap(r.labels) ? r.labels : {},
    schedulable: r.schedulable,
    source: r.source,
    external: { accelerators: r.externalAccelerators, cpuMillis: r.externalCpuMillis, memoryMiB: r.externalMemoryMiB },
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** Result of an upsert: the row after, and whether it was created (201) or replaced (200). */
export interface Upserted<T> {
  record: T;
  created: boolean;
}

/**
 * Outcome of deleting a tenancy object: gone (with the audit event written in the same transaction),
 * absent, or refused because something still uses it (nothing written).
 */
export type Deletion<Use> = { outcome: 'deleted'; eventId: string } | { outcome: 'missing' } | { outcome: 'in-use'; use: Use };

/** A write refused because a row it names does not exist (its foreign key said so): `field` names it. */
export class MissingReferenceError extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
  ) {
    super(`unknown ${field}: ${value}`);
    this.name = 'MissingReferenceError';
  }
}
