// KubeJobStore's grouped statements (many concurrent bind workers and pod events) on a real Postgres:
// each call gets its own answer, and a job steps once however many callers race for the same step.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import { KubeJobStore } from '../../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { seedFleet, submitJobs } from './fleet.js';

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'kube_job_store' });
  db = new Database(testDb.url, { poolSize: 4 });
  await seedFleet(db.pool, { nodes: 4, perNode: 8 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

describe('KubeJobStore (grouped statements)', () => {
  it('steps each job once when concurrent callers race for the same step, with one transition and one event each', async () => {
    const ids = await submitJobs(db.pool, 40, { tag: 'race' });
    const admitted = ids.slice(0, 30);
    await db.pool.query(`UPDATE jobs SET state = 'ADMITTED' WHERE id = ANY($1::uuid[])`, [admitted]);
    const store = new KubeJobStore(db);
    // Every job is stepped twice at once (a bind worker and a pod event); the 10 PENDING ones cannot step.
    const calls = [...ids, ...ids].map((id) => store.advance(id, 'ADMITTED', 'BINDING', 'binding pods'));
    const made = await Promise.all(calls);
    for (const id of admitted) expect(made.filter((m, i) => m && [...ids, ...ids][i] === id)).toHaveLength(1);
    expect(made.filter(Boolean)).toHaveLength(30);
    const states = await db.pool.query<{ state: string; n: number }>(`SELECT state::text AS state, count(*)::int AS n FROM jobs GROUP BY state ORDER BY state`);
    expect(states.rows).toEqual([{ state: 'BINDING', n: 30 }, { state: 'PENDING', n: 10 }]);
    const transitions = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_transitions WHERE "to" = 'BINDING'`);
    expect(transitions.rows[0]!.n).toBe(30);
    const events = await db.pool.query<{ n: number; msg: string }>(
      `SELECT count(*)::int AS n, min(message) AS msg FROM events WHERE kind = 'job.binding' AND job_id = ANY($1::uuid[])`,
      [admitted],
    );
    expect(events.rows[0]).toEqual({ n: 30, msg: 'ADMITTED → BINDING: binding pods' });
    // BINDING → RUNNING sets started_at.
    expect(await store.advance(admitted[0]!, 'BINDING', 'RUNNING', 'all 1 replicas running')).toBe(true);
    const started = await db.pool.query<{ ok: boolean }>(`SELECT started_at IS NOT NULL AS ok FROM jobs WHERE id = $1`, [admitted[0]]);
    expect(started.rows[0]!.ok).toBe(true);
  });

  it('reads bind targets a group at a time, each with its own allocations, nodes and neighbours, and null for an unknown job', async () => {
    const [a, b] = await submitJobs(db.pool, 2, { tag: 'targets', replicas: 2, perReplica: 4 });
    await db.pool.query(`UPDATE jobs SET state = 'ADMITTED', flavor = 'h100-80gb', admitted_at = now() WHERE id = ANY($1::uuid[])`, [[a, b]]);
    await db.pool.query(
      `INSERT INTO allocations (job_id, replica, node, flavor, accelerators, cpu_millis, memory_mib)
       VALUES ($1, 1, 'node-00002', 'h100-80gb', 4, 0, 0), ($1, 0, 'node-00001', 'h100-80gb', 4, 0, 0), ($2, 0, 'node-00003', 'h100-80gb', 4, 0, 0)`,
      [a, b],
    );
    const store = new KubeJobStore(db);
    const [ta, tb, none] = await Promise.all([store.bindTarget(a!), store.bindTarget(b!), store.bindTarget('00000000-0000-4000-8000-000000000000')]);
    const held = { accelerators: 4, cpuMillis: 0, memoryMiB: 0 };
    expect(ta?.allocations).toEqual([{ replica: 0, node: 'node-00001', ...held }, { replica: 1, node: 'node-00002', ...held }]);
    expect(tb?.allocations).toEqual([{ replica: 0, node: 'node-00003', ...held }]);
    expect(ta?.nodes.map((n) => n.name).sort()).toEqual(['node-00001', 'node-00002']);
    expect(ta?.nodes[0]).toMatchObject({ schedulable: true });
    expect(ta?.neighbours.size).toBe(0);
    expect(tb?.flavor).toMatchObject({ name: 'h100-80gb', resourceName: 'nvidia.com/gpu' });
    expect(none).toBeNull();

    // Another job's replica on node-00003: b's neighbour there (its pod holds its share at bind time).
    const [c] = await submitJobs(db.pool, 1, { tag: 'neighbour', replicas: 1, perReplica: 4 });
    await db.pool.query(`UPDATE jobs SET state = 'RUNNING', flavor = 'h100-80gb', admitted_at = now() WHERE id = $1`, [c]);
    await db.pool.query(`INSERT INTO allocations (job_id, replica, node, flavor, accelerators, cpu_millis, memory_mib) VALUES ($1, 0, 'node-00003', 'h100-80gb', 4, 0, 0)`, [c]);
    expect([...(await store.bindTarget(b!))!.neighbours]).toEqual([`${c}/0/node-00003`]);
  });
});
