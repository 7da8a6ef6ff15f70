import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { createTestDatabase, Database, JobRepository, SubmissionQueueFullError, type NewJob, type TestDatabase } from '#db';
import './harness.js';

const job = (name: string, overrides: Partial<NewJob> = {}): NewJob => ({
  name,
  team: 'vision',
  kind: 'training',
  priority: 0,
  preemptible: true,
  replicas: 1,
  minReplicas: 1,
  acceleratorsPerReplica: 1,
  cpuMillisPerReplica: 1000,
  memoryMiBPerReplica: 1024,
  flavors: ['h100-80gb'],
  flavorSelection: 'preference',
  speeds: null,
  topologyLevel: 'none',
  tpuShape: null,
  expectedRuntimeSeconds: null,
  template: { image: 'x' },
  ...overrides,
});

describe('group commit of submissions (JobRepository over a real Postgres)', () => {
  let db: TestDatabase;
  let database: Database;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase({ label: 'api_group' });
    database = new Database(db.url, { poolSize: 8 });
    pool = database.pool;
    await pool.query(`INSERT INTO flavors (name, kind, resource_name) VALUES ('h100-80gb', 'nvidia-gpu', 'nvidia.com/gpu')`);
    await pool.query(`INSERT INTO teams (name) VALUES ('vision')`);
  });
  afterAll(async () => {
    await database.close();
    await db.drop();
  });

  it('groups concurrent submissions, keeps per-row outcomes, and one bad row fails alone', async () => {
    // One statement in flight: the other 49 submissions queue and go as groups.
    const repo = new JobRepository(database, { maxGroup: 16, maxInFlight: 1 });
    const submissions = Array.from({ length: 50 }, (_, i) => {
      if (i === 10) return repo.submit(job('unknown-team', { team: 'ghost' }), 'alice', null);
      if (i === 20) return repo.submit(job('unknown-flavor', { flavors: ['h100-80gb', 'h200'] }), 'alice', null);
      // A row that passes the API's checks cannot do this; the repository must still isolate it.
      if (i === 30) return repo.submit(job('poison', { template: { image: 'a\u0000b' } }), 'alice', null);
      if (i === 40 || i === 41) return repo.submit(job('same-key'), 'alice', { key: 'k1', requestHash: 'h1' });
      if (i === 42) return repo.submit(job('same-key-other-body'), 'alice', { key: 'k1', requestHash: 'h2' });
      return repo.submit(job(`ok-${i}`), 'alice', { key: `key-${i}`, requestHash: 'h' });
    });
    const results = await Promise.allSettled(submissions);
    const kinds = results.map((r) => (r.status === 'fulfilled' ? r.value.kind : 'rejected'));
    expect(kinds[10]).toBe('unknown-references');
    expect(kinds[20]).toBe('unknown-references');
    expect(kinds[30]).toBe('rejected');
    expect([kinds[40], kinds[41]].sort()).toEqual(['created', 'replayed']);
    expect(kinds[42]).toBe('key-reused');
    const ok = kinds.filter((k, i) => k === 'created' && ![40, 41].includes(i));
    expect(ok).toHaveLength(44);
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0]!.n).toBe(45);
    const transitions = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_transitions WHERE "to" = 'PENDING' AND "from" IS NULL`);
    expect(transitions.rows[0]!.n).toBe(45);
    const keys = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys');
    expect(keys.rows[0]!.n).toBe(45);
  });

  it('refuses submissions beyond the queue bound instead of queueing without limit, and stores none of them', async () => {
    const repo = new JobRepository(database, { maxGroup: 1, maxInFlight: 1, maxQueued: 2 });
    const before = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => repo.submit(job(`burst-${i}`), 'alice', null)));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBe(7);
    expect(refused.every((r) => r.status === 'rejected' && r.reason instanceof SubmissionQueueFullError)).toBe(true);
    const after = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
    expect(after - before).toBe(3);
  });
});
