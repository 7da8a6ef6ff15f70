import { inTransaction, type DbHandle } from './db-handle.js';
import { writeTenancyEvent, type Deletion, type NodeRecord, type Upserted } from './tenancy.records.js';

/** What keeps a node from being deleted: the jobs holding accelerators on it (id and name). */
export interface NodeUse {
  jobs: { id: string; name: string; team: string }[];
}

interface NodeRow {
  name: string;
  flavor: string;
  accelerators: number;
  cpu_millis: number;
  memory_mib: number;
  zone: string | null;
  block: string | null;
  domain: string | null;
  tpu_shape: string | null;
  schedulable: boolean;
  source: 'api' | 'kubernetes';
  external_accelerators: number;
  external_cpu_millis: number;
  external_memory_mib: number;
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

const COLUMNS = `name, flavor, accelerators, cpu_millis, memory_mib, zone, block, domain, tpu_shape, schedulable, source,
  external_accelerators, external_cpu_millis, external_memory_mib, created_at, updated_at`;

const toRecord = (r: NodeRow): NodeRecord => {
  const topology: NodeRecord['topology'] = {};
  if (r.zone !== null) topology.zone = r.zone;
  if (r.block !== null) topology.block = r.block;
  if (r.domain !== null) topology.domain = r.domain;
  if (r.tpu_shape !== null) topology.tpuShape = r.tpu_shape;
  return {
    name: r.name,
    flavor: r.flavor,
    accelerators: r.accelerators,
    cpuMillis: r.cpu_millis,
    memoryMiB: r.memory_mib,
    topology,
    schedulable: r.schedulable,
    source: r.source,
    external: { accelerators: r.external_accelerators, cpuMillis: r.external_cpu_millis, memoryMiB: r.external_memory_mib },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

export interface NodeInput {
  flavor: string;
  accelerators: number;
  cpuMillis: number;
  memoryMiB: number;
  topology: NodeRecord['topology'];
  schedulable: boolean;
}

export class NodeRepository {
  constructor(private readonly db: DbHandle) {}

  /** A node written through the API (source `api`). Throws pg 23503 when the flavor does not exist. */
  async upsert(name: string, n: NodeInput): Promise<Upserted<NodeRecord>> {
    const { rows } = await this.db.pool.query<NodeRow>(
      `INSERT INTO nodes (name, flavor, accelerators, cpu_millis, memory_mib, zone, block, domain, tpu_shape, schedulable, source, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'api', now())
       ON CONFLICT (name) DO UPDATE SET flavor = EXCLUDED.flavor, accelerators = EXCLUDED.accelerators,
         cpu_millis = EXCLUDED.cpu_millis, memory_mib = EXCLUDED.memory_mib, zone = EXCLUDED.zone, block = EXCLUDED.block,
         domain = EXCLUDED.domain, tpu_shape = EXCLUDED.tpu_shape, schedulable = EXCLUDED.schedulable, updated_at = now()
       RETURNING ${COLUMNS}, (xmax = 0) AS created`,
      [
        name,
        n.flavor,
        n.accelerators,
        n.cpuMillis,
        n.memoryMiB,
        n.topology.zone ?? null,
        n.topology.block ?? null,
        n.topology.domain ?? null,
        n.topology.tpuShape ?? null,
        n.schedulable,
      ],
    );
    const row = rows[0]!;
    return { record: toRecord(row), created: row.created === true };
  }

  async list(): Promise<NodeRecord[]> {
    const { rows } = await this.db.pool.query<NodeRow>(`SELECT ${COLUMNS} FROM nodes ORDER BY name`);
    return rows.map(toRecord);
  }

  async get(name: string): Promise<NodeRecord | null> {
    const { rows } = await this.db.pool.query<NodeRow>(`SELECT ${COLUMNS} FROM nodes WHERE name = $1`, [name]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Deletes a node no job holds accelerators on and writes a node.deleted event, in one transaction. An
   * admission placing a job on it meanwhile waits for the row lock and then fails on the foreign key (the
   * scheduler's cycle is retried), or committed first and is seen by the check.
   */
  async delete(name: string, actor: string): Promise<Deletion<NodeUse>> {
    return inTransaction(this.db.pool, async (client) => {
      const node = await client.query<{ flavor: string }>('SELECT flavor FROM nodes WHERE name = $1 FOR UPDATE', [name]);
      if (node.rowCount !== 1) return { outcome: 'missing' };
      const { rows } = await client.query<{ id: string; name: string; team: string }>(
        `SELECT DISTINCT j.id::text AS id, j.name, j.team FROM allocations a JOIN jobs j ON j.id = a.job_id WHERE a.node = $1 ORDER BY j.name, id`,
        [name],
      );
      if (rows.length > 0) return { outcome: 'in-use', use: { jobs: rows } };
      await client.query('DELETE FROM nodes WHERE name = $1', [name]);
      const eventId = await writeTenancyEvent(client, 'node.deleted', null, actor, `node ${name} deleted by ${actor}`, { node: name, flavor: node.rows[0]!.flavor });
      return { outcome: 'deleted', eventId };
    });
  }
}
