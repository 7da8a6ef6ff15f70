// KubeJobStore's grouped statements (many concurrent bind workers and pod events) on a real Postgres:
// each call gets its own answer, and a job steps once however many callers race for the same step.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Database, createTestDatabase, jobsOnDepartedNodes, moveJobs, type TestDatabase } from '#db';
import { PgOutboxStore } from '#scheduling';
import { KubeJobStore } from '../../../apps/scheduler/src/kubernetes/kube-job-store.js';
import { seedFleet, submitJobs } from './fleet.js';

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'kube_job_store' });
  db = new Database(testDb.url, { poolSize: 4 });
  await seedFleet(db.pool, { nodes: 12, perNode: 8 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

/** PENDING → ADMITTED through the transition writer, on h100-80gb, with the given allocation. */
async function admit(jobs: { id: string; placement: { replica: number; node: string; accelerators: number }[] }[]): Promise<void> {
  const { results } = await moveJobs(
    db.pool,
    jobs.map((j) => ({
      jobId: j.id,
      to: 'ADMITTED' as const,
      reason: 'test admission',
      admission: {
        flavor: 'h100-80gb',
        replicas: j.placement.length,
        preempts: [],
        placement: j.placement.map((p) => ({ ...p, cpuMillis: 0, memoryMiB: 0 })),
      },
    })),
  );
  expect(results.every((r) => r.moved)).toBe(true);
}

describe('KubeJobStore (grouped statements)', () => {
  it('steps each job once when concurrent callers race for the same step, with one transition and one event each', async () => {
    const ids = await submitJobs(db.pool, 40, { tag: 'race' });
    const admitted = ids.slice(0, 30);
    await admit(admitted.map((id, i) => ({ id, placement: [{ replica: 0, node: `node-${String((i % 8) + 5).padStart(5, '0')}`, accelerators: 1 }] })));
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
    await admit([
      { id: a!, placement: [{ replica: 1, node: 'node-00002', accelerators: 4 }, { replica: 0, node: 'node-00001', accelerators: 4 }] },
      { id: b!, placement: [{ replica: 0, node: 'node-00003', accelerators: 4 }] },
    ]);
    const store = new KubeJobStore(db);
    const [ta, tb, none] = await Promise.all([store.bindTarget(a!), store.bindTarget(b!), store.bindTarget('00000000-0000-4000-8000-000000000000')]);
    const held = { accelerators: 4, cpuMillis: 0, memoryMiB: 0, role: null };
    expect(ta?.allocations).toEqual([{ replica: 0, node: 'node-00001', ...held }, { replica: 1, node: 'node-00002', ...held }]);
    expect(tb?.allocations).toEqual([{ replica: 0, node: 'node-00003', ...held }]);
    expect(ta?.nodes.map((n) => n.name).sort()).toEqual(['node-00001', 'node-00002']);
    expect(ta?.nodes[0]).toMatchObject({ schedulable: true });
    expect(ta?.neighbours.size).toBe(0);
    expect(tb?.flavor).toMatchObject({ name: 'h100-80gb', resourceName: 'nvidia.com/gpu' });
    expect(none).toBeNull();

    // Another job's replica on node-00003: b's neighbour there (its pod holds its share at bind time).
    const [c] = await submitJobs(db.pool, 1, { tag: 'neighbour', replicas: 1, perReplica: 4 });
    await admit([{ id: c!, placement: [{ replica: 0, node: 'node-00003', accelerators: 4 }] }]);
    await moveJobs(db.pool, [{ jobId: c!, to: 'RUNNING', reason: 'started' }]);
    expect([...(await store.bindTarget(b!))!.neighbours]).toEqual([`${c}/0/node-00003`]);
  });

  it('requeues a gang to PENDING with its admission cleared (flavor, replicas, admittedAt, startedAt, victims, allocation), as a cycle preemption does', async () => {
    const [r] = await submitJobs(db.pool, 1, { tag: 'requeue', replicas: 1, perReplica: 2 });
    await admit([{ id: r!, placement: [{ replica: 0, node: 'node-00004', accelerators: 2 }] }]);
    const store = new KubeJobStore(db);
    expect(await store.advance(r!, 'ADMITTED', 'BINDING', 'binding pods')).toBe(true);
    expect(await store.advance(r!, 'BINDING', 'RUNNING', 'all 1 replicas running')).toBe(true);
    expect(await store.requeue(r!, 'replica 0 lost', { notBeforeMs: 5_000 })).toBe(true);
    const job = await db.pool.query(
      `SELECT state::text AS state, flavor, admitted_replicas, admitted_at, started_at, preempted_jobs::text[] AS preempted_jobs,
              pending_message, queued_at > now() AS backing_off, (SELECT count(*)::int FROM allocations WHERE job_id = j.id) AS allocations
       FROM jobs j WHERE id = $1`,
      [r],
    );
    expect(job.rows[0]).toEqual({
      state: 'PENDING', flavor: null, admitted_replicas: null, admitted_at: null, started_at: null, preempted_jobs: [],
      pending_message: 'replica 0 lost', backing_off: true, allocations: 0,
    });
    const transitions = await db.pool.query(`SELECT "from"::text AS "from", "to"::text AS "to" FROM job_transitions WHERE job_id = $1 ORDER BY id`, [r]);
    expect(transitions.rows.slice(-2)).toEqual([{ from: 'RUNNING', to: 'PREEMPTED' }, { from: 'PREEMPTED', to: 'PENDING' }]);
    const outbox = await db.pool.query(`SELECT kind, dedupe_key FROM outbox WHERE payload->>'jobId' = $1`, [r]);
    expect(outbox.rows).toEqual([{ kind: 'delete', dedupe_key: expect.stringMatching(new RegExp(`^delete:${r}:v\\d+$`)) }]);
    // A replay (the job is PENDING now) changes nothing.
    expect(await store.requeue(r!, 'replica 0 lost')).toBe(false);
  });

  it("names, while a re-admitted job holds, the earlier admission's delete not carried out yet (its bind waits for it), and nothing once it is done", async () => {
    const [r] = await submitJobs(db.pool, 1, { tag: 'releasing', replicas: 1, perReplica: 2 });
    const store = new KubeJobStore(db);
    const outbox = new PgOutboxStore(db.pool);
    await admit([{ id: r!, placement: [{ replica: 0, node: 'node-00006', accelerators: 2 }] }]);
    expect((await store.bindTarget(r!))!.releasing).toEqual([]);
    // Requeued (its node left the cluster) and admitted again at once, before the worker took its delete.
    expect(await store.requeue(r!, 'node node-00006 left the cluster; gang requeued')).toBe(true);
    expect((await store.bindTarget(r!))!.releasing).toEqual([]); // PENDING: nothing to bind
    await admit([{ id: r!, placement: [{ replica: 0, node: 'node-00007', accelerators: 2 }] }]);
    const entries = await Promise.all((await outbox.listDue(new Date(), 1000)).map((ref) => outbox.get(ref.id)));
    const [remove] = entries.filter((e) => e?.kind === 'delete' && (e.payload as { jobId: string }).jobId === r);
    expect((await store.bindTarget(r!))!.releasing).toEqual([remove!.id]);
    await outbox.markDone(remove!.id);
    expect((await store.bindTarget(r!))!.releasing).toEqual([]);
  });

  it('lists the PENDING jobs of preempted workloads, with their workload, up to a limit (a suspended workload has no pods to be seen by)', async () => {
    const [x, y, plain] = await submitJobs(db.pool, 3, { tag: 'suspended' });
    const workload = { apiVersion: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', namespace: 'ml', name: 'js', uid: 'uid-js' };
    // Fixtures: as a preemption and the workload importer leave them (neither is the state, which stays PENDING).
    await db.pool.query(`UPDATE jobs SET preemption_count = 1, template = template || jsonb_build_object('workload', $2::jsonb) WHERE id = ANY($1::uuid[])`, [[x, y], JSON.stringify(workload)]);
    await db.pool.query(`UPDATE jobs SET preemption_count = 1 WHERE id = $1`, [plain]);
    const store = new KubeJobStore(db);
    const rows = await store.preemptedWaitingWorkloads(10);
    expect(rows.map((r) => r.id).sort()).toEqual([x, y].sort());
    expect(rows.map((r) => [r.state, r.workload])).toEqual([['PENDING', workload], ['PENDING', workload]]);
    expect(await store.preemptedWaitingWorkloads(1)).toHaveLength(1);
  });

  it('lists the jobs holding Kubernetes nodes that are not present, with those nodes, and whether each is an imported foreign gang', async () => {
    const [own, foreign, pending] = await submitJobs(db.pool, 3, { tag: 'departed', replicas: 2, perReplica: 1 });
    await db.pool.query(`UPDATE nodes SET source = 'kubernetes' WHERE name IN ('node-00010', 'node-00011', 'node-00012')`);
    await admit([
      { id: own!, placement: [{ replica: 0, node: 'node-00010', accelerators: 1 }, { replica: 1, node: 'node-00011', accelerators: 1 }] },
      { id: foreign!, placement: [{ replica: 0, node: 'node-00011', accelerators: 1 }, { replica: 1, node: 'node-00012', accelerators: 1 }] },
    ]);
    await db.pool.query(`UPDATE jobs SET template = template || '{"importedFrom": {"namespace": "ml", "gang": "g"}}'::jsonb WHERE id = $1`, [foreign]);
    const present = Array.from({ length: 12 }, (_, i) => `node-${String(i + 1).padStart(5, '0')}`);
    expect(await jobsOnDepartedNodes(db, present)).toEqual([]);
    // (The earlier tests' jobs hold these nodes too: only this test's are compared.)
    const ours = new Set([own, foreign, pending]);
    const departed = async (...gone: string[]) =>
      (await jobsOnDepartedNodes(db, present.filter((n) => !gone.includes(n)))).filter((j) => ours.has(j.jobId));
    expect(await departed('node-00012')).toEqual([{ jobId: foreign, nodes: ['node-00012'], foreign: true }]);
    const both = await departed('node-00010', 'node-00011', 'node-00001');
    expect(both.sort((a, b) => a.jobId.localeCompare(b.jobId))).toEqual(
      [
        { jobId: own, nodes: ['node-00010', 'node-00011'], foreign: false },
        { jobId: foreign, nodes: ['node-00011'], foreign: true },
      ].sort((a, b) => a.jobId!.localeCompare(b.jobId!)),
    );
    // A node of another source (node-00001 is not Kubernetes') and a job not holding anything are not listed.
    expect(both.map((j) => j.jobId)).not.toContain(pending);
  });
});
