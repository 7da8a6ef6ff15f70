/** Rows of the tenancy tables as the repositories return them (API spellings of enums). */
export type FlavorKindName = 'nvidia-gpu' | 'aws-trainium' | 'intel-gaudi' | 'google-tpu';

export interface FlavorRecord {
  name: string;
  kind: FlavorKindName;
  resourceName: string;
  nodeLabels: Record<string, string>;
  /** Node label keys this flavor's topology is read from, per level, where they differ from the kind's defaults. */
  topologyLabels: Partial<Record<'zone' | 'block' | 'domain' | 'tpuShape', string>>;
  memoryGiB: number | null;
  relativeSpeed: number;
  costPerHour: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface CohortRecord {
  name: string;
  description: string;
  members: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface TeamRecord {
  name: string;
  cohort: string | null;
  fairShareWeight: number;
  withinTeam: 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority';
  reclaimWithinCohort: 'Never' | 'LowerPriority' | 'Any';
  createdAt: Date;
  updatedAt: Date;
}

export interface QuotaRecord {
  team: string;
  flavor: string;
  nominal: number;
  borrowingLimit: number | null;
  lendingLimit: number | null;
}

export interface NodeRecord {
  name: string;
  flavor: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
  topology: { zone?: string; block?: string; domain?: string; tpuShape?: string };
  schedulable: boolean;
  source: 'api' | 'kubernetes';
  external: { accelerators: number; cpuMillis: number; memoryMiB: number };
  createdAt: Date;
  updatedAt: Date;
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

/** What an event-writing query needs from a pg client or pool. */
export interface EventWriter {
  query: (sql: string, values: unknown[]) => Promise<{ rows: { id: string }[] }>;
}

/** Writes one audit event (who did what to which team) and returns its id. */
export async function writeTenancyEvent(client: EventWriter, kind: string, team: string | null, actor: string, message: string, data: unknown): Promise<string> {
  const { rows } = await client.query(
    'INSERT INTO events (kind, team, actor, message, data) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id::text AS id',
    [kind, team, actor, message, JSON.stringify(data)],
  );
  return rows[0]!.id;
}
