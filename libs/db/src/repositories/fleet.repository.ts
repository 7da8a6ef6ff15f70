import { readFleetHistory, type FleetHistoryQuery, type FleetHistoryRow } from '../history/fleet-history.js';
import type { DbHandle } from './db-handle.js';

/** One node with how much of it is taken: by our allocations, and by pods of other schedulers. */
export interface FleetNode {
  name: string;
  flavor: string;
  zone: string | null;
  block: string | null;
  domain: string | null;
  tpuShape: string | null;
  accelerators: number;
  /** Accelerators held by Quartermaster's allocations. */
  allocated: number;
  /** Accelerators held by pods Quartermaster does not manage. */
  external: number;
  /** Jobs holding an allocation on it. */
  jobs: number;
  schedulable: boolean;
}

/**
 * Accelerators of one flavor, split into parts that add up to `total`: `allocated` (ours and others'
 * pods), `free` (unallocated on schedulable nodes) and `unschedulable` (unallocated on cordoned or
 * NotReady nodes, so not usable).
 */
export interface FlavorCapacity {
  flavor: string;
  kind: string;
  nodes: number;
  total: number;
  allocated: number;
  free: number;
  unschedulable: number;
}

export interface PendingReasonCount {
  /** Null: no cycle has looked at these jobs yet. */
  code: string | null;
  jobs: number;
  accelerators: number;
}

export interface JobStateCount {
  state: string;
  jobs: number;
}

const ACTIVE_STATES = ['PENDING', 'ADMITTED', 'BINDING', 'RUNNING'] as const;

/** Every node with its allocation, as FleetNode (columns named as its fields). */
const NODE_SELECT = `SELECT n.name, n.flavor, n.zone, n.block, n.domain, n.tpu_shape AS "tpuShape", n.accelerators, n.schedulable,
    n.external_accelerators AS external, COALESCE(a.allocated, 0)::int AS allocated, COALESCE(a.jobs, 0)::int AS jobs
  FROM nodes n
  LEFT JOIN (SELECT node, sum(accelerators) AS allocated, count(DISTINCT job_id) AS jobs FROM allocations GROUP BY node) a ON a.node = n.name`;

/** Read-only aggregates of the fleet and the queue for dashboards (the console's Overview and Nodes pages). */
export class FleetRepository {
  constructor(private readonly db: DbHandle) {}

  /** The fleet history (history/fleet-history.ts) of a window, at one grain. */
  history(q: FleetHistoryQuery): Promise<FleetHistoryRow[]> {
    return readFleetHistory(this.db.pool, q);
  }

  /** Every node with its allocation, grouped for display: flavor, zone, block, domain, name. */
  async nodes(names?: readonly string[]): Promise<FleetNode[]> {
    const { rows } =
      names === undefined
        ? await this.db.pool.query<FleetNode>(
            `${NODE_SELECT} ORDER BY n.flavor, n.zone NULLS LAST, n.block NULLS LAST, n.domain NULLS LAST, n.name`,
          )
        : await this.db.pool.query<FleetNode>(`${NODE_SELECT} WHERE n.name = ANY($1::text[]) ORDER BY n.name`, [
            names,
          ]);
    return rows;
  }

  /** Per flavor (every flavor, with or without nodes): total = allocated + free + unschedulable. */
  async capacity(): Promise<FlavorCapacity[]> {
    const { rows } = await this.db.pool.query<FlavorCapacity>(
      `WITH per_node AS (
         SELECT n.flavor, n.accelerators, n.schedulable,
                LEAST(n.accelerators, n.external_accelerators + COALESCE(a.allocated, 0)) AS taken
         FROM nodes n LEFT JOIN (SELECT node, sum(accelerators) AS allocated FROM allocations GROUP BY node) a ON a.node = n.name)
       SELECT f.name AS flavor, f.kind::text AS kind, count(p.flavor)::int AS nodes,
              COALESCE(sum(p.accelerators), 0)::int AS total,
              COALESCE(sum(p.taken), 0)::int AS allocated,
              COALESCE(sum(p.accelerators - p.taken) FILTER (WHERE p.schedulable), 0)::int AS free,
              COALESCE(sum(p.accelerators - p.taken) FILTER (WHERE NOT p.schedulable), 0)::int AS unschedulable
       FROM flavors f LEFT JOIN per_node p ON p.flavor = f.name
       GROUP BY f.name, f.kind ORDER BY f.name`,
    );
    return rows;
  }

  /** Pending jobs and the accelerators they ask for, by the reason of the last cycle. */
  async pendingByReason(teams?: readonly string[]): Promise<PendingReasonCount[]> {
    const { rows } = await this.db.pool.query<{ code: string | null; jobs: number; accelerators: string }>(
      `SELECT pending_code::text AS code, count(*)::int AS jobs, sum(replicas::bigint * accelerators_per_replica)::text AS accelerators
       FROM jobs WHERE state = 'PENDING' AND ($1::text[] IS NULL OR team = ANY($1::text[]))
       GROUP BY pending_code ORDER BY count(*) DESC, pending_code NULLS LAST`,
      [teams ?? null],
    );
    return rows.map((r) => ({ code: r.code, jobs: r.jobs, accelerators: Number(r.accelerators) }));
  }

  /** Jobs per active state (PENDING, ADMITTED, BINDING, RUNNING), every state present (0 when none), in that order. */
  async activeJobs(teams?: readonly string[]): Promise<JobStateCount[]> {
    const groups = await this.db.prisma.job.groupBy({
      by: ['state'],
      where: { state: { in: [...ACTIVE_STATES] }, ...(teams === undefined ? {} : { team: { in: [...teams] } }) },
      _count: { _all: true },
    });
    const count = new Map(groups.map((g) => [g.state, g._count._all]));
    return ACTIVE_STATES.map((state) => ({ state, jobs: count.get(state) ?? 0 }));
  }
}
