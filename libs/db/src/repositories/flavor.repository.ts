import type { DbHandle } from './db-handle.js';
import type { FlavorKindName, FlavorRecord, Upserted } from './tenancy.records.js';

interface FlavorRow {
  name: string;
  kind: FlavorKindName;
  resource_name: string;
  node_labels: Record<string, string>;
  topology_labels: Record<string, string>;
  memory_gib: number | null;
  relative_speed: number;
  cost_per_hour: number;
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

const COLUMNS = 'name, kind, resource_name, node_labels, topology_labels, memory_gib, relative_speed, cost_per_hour, created_at, updated_at';

const toRecord = (r: FlavorRow): FlavorRecord => ({
  name: r.name,
  kind: r.kind,
  resourceName: r.resource_name,
  nodeLabels: r.node_labels,
  topologyLabels: r.topology_labels,
  memoryGiB: r.memory_gib,
  relativeSpeed: r.relative_speed,
  costPerHour: r.cost_per_hour,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type FlavorInput = Omit<FlavorRecord, 'name' | 'createdAt' | 'updatedAt' | 'topologyLabels'> & Partial<Pick<FlavorRecord, 'topologyLabels'>>;

/** What still refers to a flavor (a flavor in use cannot be deleted). */
export interface FlavorUse {
  nodes: number;
  quotas: number;
  activeJobs: number;
}

export class FlavorRepository {
  constructor(private readonly db: DbHandle) {}

  async upsert(name: string, f: FlavorInput): Promise<Upserted<FlavorRecord>> {
    const { rows } = await this.db.pool.query<FlavorRow>(
      `INSERT INTO flavors (name, kind, resource_name, node_labels, topology_labels, memory_gib, relative_speed, cost_per_hour, updated_at)
       VALUES ($1, $2::flavor_kind, $3, $4::jsonb, $5::jsonb, $6, $7, $8, now())
       ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, resource_name = EXCLUDED.resource_name,
         node_labels = EXCLUDED.node_labels, topology_labels = EXCLUDED.topology_labels, memory_gib = EXCLUDED.memory_gib,
         relative_speed = EXCLUDED.relative_speed, cost_per_hour = EXCLUDED.cost_per_hour, updated_at = now()
       RETURNING ${COLUMNS}, (xmax = 0) AS created`,
      [name, f.kind, f.resourceName, JSON.stringify(f.nodeLabels), JSON.stringify(f.topologyLabels ?? {}), f.memoryGiB, f.relativeSpeed, f.costPerHour],
    );
    const row = rows[0]!;
    return { record: toRecord(row), created: row.created === true };
  }

  async list(): Promise<FlavorRecord[]> {
    const { rows } = await this.db.pool.query<FlavorRow>(`SELECT ${COLUMNS} FROM flavors ORDER BY name`);
    return rows.map(toRecord);
  }

  async get(name: string): Promise<FlavorRecord | null> {
    const { rows } = await this.db.pool.query<FlavorRow>(`SELECT ${COLUMNS} FROM flavors WHERE name = $1`, [name]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Names among `names` that are not flavors. */
  async missing(names: readonly string[]): Promise<string[]> {
    const { rows } = await this.db.pool.query<{ name: string }>(
      'SELECT n AS name FROM unnest($1::text[]) AS n WHERE NOT EXISTS (SELECT 1 FROM flavors f WHERE f.name = n)',
      [names],
    );
    return rows.map((r) => r.name);
  }

  async use(name: string): Promise<FlavorUse> {
    const { rows } = await this.db.pool.query<FlavorUse>(
      `SELECT (SELECT count(*)::int FROM nodes WHERE flavor = $1) AS nodes,
              (SELECT count(*)::int FROM quotas WHERE flavor = $1) AS quotas,
              (SELECT count(*)::int FROM jobs WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
                 AND ($1 = ANY(flavors) OR flavor = $1)) AS "activeJobs"`,
      [name],
    );
    return rows[0]!;
  }

  /**
   * Deletes the flavor only if nothing uses it, in one statement. Returns 'deleted', 'in-use' or 'missing'.
   */
  async deleteIfUnused(name: string): Promise<'deleted' | 'in-use' | 'missing'> {
    const { rowCount } = await this.db.pool.query(
      `DELETE FROM flavors f WHERE f.name = $1
         AND NOT EXISTS (SELECT 1 FROM nodes WHERE flavor = $1)
         AND NOT EXISTS (SELECT 1 FROM quotas WHERE flavor = $1)
         AND NOT EXISTS (SELECT 1 FROM jobs WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
                           AND ($1 = ANY(flavors) OR flavor = $1))`,
      [name],
    );
    if (rowCount === 1) return 'deleted';
    return (await this.get(name)) ? 'in-use' : 'missing';
  }
}
