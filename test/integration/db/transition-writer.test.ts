// The transition writer (libs/db/src/lifecycle) on a real Postgres: every (from, to) pair of the lifecycle
// table, direct and through PREEMPTED, in one set-based call; the columns each target resets; events,
// transitions and outbox entries; optimistic checks; and a scan proving nothing else writes jobs.state.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOLDING_STATES, JOB_STATES, TERMINAL_STATES, canTransition, type JobState } from '#core';
import { Database, canMove, createTestDatabase, moveJobs, type JobMove, type TestDatabase } from '#db';
import { seedFleet, submitJobs } from '../scheduler/fleet.js';

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'transitions' });
  db = new Database(testDb.url, { poolSize: 4 });
  await seedFleet(db.pool, { nodes: 40, perNode: 8 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

const FLAVOR = 'h100-80gb';
let nodeSeq = 0;

function admission(jobId: string): JobMove {
  nodeSeq += 1;
  const node = `node-${String(((nodeSeq - 1) % 40) + 1).padStart(5, '0')}`;
  return {
    jobId,
    to: 'ADMITTED',
    reason: 'fixture admission',
    admission: { flavor: FLAVOR, replicas: 1, preempts: [], placement: [{ replica: 0, node, accelerators: 1, cpuMillis: 0, memoryMiB: 0 }] },
  };
}

/** The path from PENDING to each state, through the writer itself. */
const PATH: Record<JobState, JobState[]> = {
  PENDING: [],
  ADMITTED: ['ADMITTED'],
  BINDING: ['ADMITTED', 'BINDING'],
  RUNNING: ['ADMITTED', 'BINDING', 'RUNNING'],
  SUCCEEDED: ['ADMITTED', 'RUNNING', 'SUCCEEDED'],
  FAILED: ['FAILED'],
  CANCELLED: ['CANCELLED'],
  PREEMPTED: ['ADMITTED', 'PREEMPTED'],
};

/** Jobs in the given states, each brought there by the writer (a step of every job per call). */
async function jobsIn(states: JobState[], tag: string): Promise<string[]> {
  const ids = await submitJobs(db.pool, states.length, { tag });
  const longest = Math.max(...states.map((s) => PATH[s].length));
  for (let step = 0; step < longest; step++) {
    const moves = states.flatMap((s, i): JobMove[] => {
      const to = PATH[s][step];
      if (to === undefined) return [];
      return [to === 'ADMITTED' ? admission(ids[i]!) : { jobId: ids[i]!, to, reason: 'fixture' }];
    });
    const { results } = await moveJobs(db.pool, moves, { actor: 'fixture' });
    expect(results.filter((r) => !r.moved)).toEqual([]);
  }
  return ids;
}

interface JobRow {
  id: string;
  state: JobState;
  version: number;
  flavor: string | null;
  admitted_replicas: number | null;
  admitted_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  queued_at: Date;
  pending_message: string | null;
  preempted_jobs: string[];
  allocations: number;
  transitions: { from: JobState | null; to: JobState; reason: string }[];
  events: { kind: string; actor: string; message: string }[];
  outbox: { kind: string; key: string }[];
}

async function read(ids: string[]): Promise<Map<string, JobRow>> {
  const { rows } = await db.pool.query<JobRow>(
    `SELECT j.id::text AS id, j.state::text AS state, j.version, j.flavor, j.admitted_replicas, j.admitted_at, j.started_at, j.finished_at,
            j.queued_at, j.pending_message, j.preempted_jobs::text[] AS preempted_jobs,
            (SELECT count(*)::int FROM allocations a WHERE a.job_id = j.id) AS allocations,
            (SELECT json_agg(json_build_object('from', t."from", 'to', t."to", 'reason', t.reason) ORDER BY t.id) FROM job_transitions t WHERE t.job_id = j.id) AS transitions,
            (SELECT COALESCE(json_agg(json_build_object('kind', e.kind, 'actor', e.actor, 'message', e.message) ORDER BY e.id), '[]') FROM events e WHERE e.job_id = j.id) AS events,
            (SELECT COALESCE(json_agg(json_build_object('kind', o.kind, 'key', o.dedupe_key) ORDER BY o.id), '[]') FROM outbox o WHERE o.payload->>'jobId' = j.id::text) AS outbox
     FROM jobs j WHERE j.id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

const holds = (s: JobState): boolean => HOLDING_STATES.includes(s);

/** What a move from `from` to `to` must leave, given the row before it. */
function expectMoved(before: JobRow, after: JobRow, to: JobState, via: boolean): void {
  const from = before.state;
  expect(after.state).toBe(to);
  expect(after.version).toBe(before.version + 1);
  const added = after.transitions.slice(before.transitions.length);
  expect(added.map((t) => [t.from, t.to])).toEqual(via ? [[from, 'PREEMPTED'], ['PREEMPTED', to]] : [[from, to]]);
  const events = after.events.slice(before.events.length);
  expect(events).toEqual([{ kind: `job.${to.toLowerCase()}`, actor: 'table', message: `${from} → ${to}: table move` }]);
  expect(after.allocations).toBe(holds(to) ? 1 : 0);
  if (to === 'ADMITTED') {
    expect([after.flavor, after.admitted_replicas, after.started_at, after.finished_at]).toEqual([FLAVOR, 1, null, null]);
    expect(after.admitted_at).not.toBeNull();
  }
  if (to === 'PENDING' || to === 'PREEMPTED') {
    expect([after.flavor, after.admitted_replicas, after.admitted_at, after.started_at, after.preempted_jobs]).toEqual([null, null, null, null, []]);
  }
  if (to === 'PENDING') expect(after.pending_message).toBe('table move');
  if (to === 'RUNNING') expect(after.started_at).not.toBeNull();
  if (to === 'BINDING' || to === 'RUNNING') expect([after.flavor, after.admitted_at]).toEqual([before.flavor, before.admitted_at]);
  if (TERMINAL_STATES.includes(to)) expect(after.finished_at).not.toBeNull();
  const outbox = after.outbox.slice(before.outbox.length);
  const expected = TERMINAL_STATES.includes(to) && holds(from) ? [{ kind: 'delete', key: `delete:${after.id}:v${after.version}` }] : [];
  expect(outbox).toEqual(expected);
}

describe('moveJobs: the lifecycle table, enforced in SQL', () => {
  const pairs = JOB_STATES.flatMap((from) => JOB_STATES.map((to) => ({ from, to })));

  it(`moves exactly the ${pairs.filter((p) => canTransition(p.from, p.to)).length} allowed (from, to) pairs of ${pairs.length}, in one call, each with its columns, transition, event and outbox`, async () => {
    const ids = await jobsIn(pairs.map((p) => p.from), 'pairs');
    const before = await read(ids);
    const moves = pairs.map((p, i): JobMove => ({
      ...(p.to === 'ADMITTED' ? admission(ids[i]!) : { jobId: ids[i]!, to: p.to }),
      reason: 'table move',
      event: {},
    }));
    const { results } = await moveJobs(db.pool, moves, { actor: 'table' });
    const after = await read(ids);
    pairs.forEach((p, i) => {
      const id = ids[i]!;
      const label = `${p.from} → ${p.to}`;
      const result = results[i]!;
      expect({ label, moved: result.moved }).toEqual({ label, moved: canTransition(p.from, p.to) });
      if (result.moved) {
        expect(result).toMatchObject({ from: p.from, to: p.to, version: before.get(id)!.version + 1 });
        expectMoved(before.get(id)!, after.get(id)!, p.to, false);
      } else {
        expect(result).toEqual({ jobId: id, moved: false, state: p.from });
        expect(after.get(id)).toEqual(before.get(id)); // nothing written: row, transitions, events, outbox
      }
    });
  });

  it('moves through PREEMPTED exactly the states that may be preempted (two transitions, one event)', async () => {
    const ids = await jobsIn([...JOB_STATES], 'via');
    const before = await read(ids);
    const moves = JOB_STATES.map((_, i): JobMove => ({ jobId: ids[i]!, to: 'PENDING', via: 'PREEMPTED', reason: 'table move', effects: [] }));
    const { results } = await moveJobs(db.pool, moves, { actor: 'table' });
    const after = await read(ids);
    JOB_STATES.forEach((from, i) => {
      const id = ids[i]!;
      expect({ from, moved: results[i]!.moved }).toEqual({ from, moved: canMove(from, 'PENDING', 'PREEMPTED') });
      if (results[i]!.moved) expectMoved(before.get(id)!, after.get(id)!, 'PENDING', true);
      else expect(after.get(id)).toEqual(before.get(id));
    });
    expect(JOB_STATES.filter((s) => canMove(s, 'PENDING', 'PREEMPTED'))).toEqual(['ADMITTED', 'BINDING', 'RUNNING']);
  });

  it('checks the optional from-states and version under the row lock; a replay and a repeated id change nothing', async () => {
    const [a, b, c] = await jobsIn(['ADMITTED', 'ADMITTED', 'BINDING'], 'checks');
    const v = (await read([b!])).get(b!)!.version;
    const { results } = await moveJobs(db.pool, [
      { jobId: a!, to: 'RUNNING', from: ['BINDING'], reason: 'only from BINDING' }, // allowed by the table, not by the caller
      { jobId: b!, to: 'BINDING', version: v + 1, reason: 'stale snapshot' },
      { jobId: c!, to: 'RUNNING', reason: 'pods running' },
      { jobId: c!, to: 'FAILED', reason: 'repeated id: only the first move of a job counts' },
    ]);
    expect(results.map((r) => r.moved)).toEqual([false, false, true, false]);
    expect(results[3]).toEqual({ jobId: c, moved: false, state: 'RUNNING' });
    const replay = await moveJobs(db.pool, [{ jobId: c!, to: 'RUNNING', reason: 'pods running' }]);
    expect(replay.results[0]).toEqual({ jobId: c, moved: false, state: 'RUNNING' });
    const rows = await read([a!, b!, c!]);
    expect([a, b, c].map((id) => rows.get(id!)!.state)).toEqual(['ADMITTED', 'ADMITTED', 'RUNNING']);
    expect(rows.get(c!)!.transitions.filter((t) => t.to === 'RUNNING')).toHaveLength(1);
    const missing = await moveJobs(db.pool, [{ jobId: '00000000-0000-4000-8000-000000000000', to: 'CANCELLED', reason: 'x' }]);
    expect(missing.results[0]).toEqual({ jobId: '00000000-0000-4000-8000-000000000000', moved: false, state: null });
  });

  it('writes outbox entries in catalogue order (evictions first) with one dedupe scheme, and a requeue with its backoff', async () => {
    const [victim, pending] = await jobsIn(['RUNNING', 'PENDING'], 'outbox');
    const notBefore = new Date(Date.now() + 60_000);
    const { outbox } = await moveJobs(db.pool, [
      { ...admission(pending!), reason: 'admitted', effects: [{ kind: 'bind' }] },
      {
        jobId: victim!,
        to: 'PENDING',
        via: 'PREEMPTED',
        reason: 'preempted by the other',
        requeue: { queuedAt: notBefore, preemptedBy: pending! },
        event: { kind: 'job.preempted', data: { preemptorJobId: pending } },
        effects: [{ kind: 'notify', payload: { event: 'requeued' } }, { kind: 'evict', payload: { preemptorJobId: pending! } }],
      },
    ]);
    expect(outbox.map((o) => [o.kind, o.jobId])).toEqual([['evict', victim], ['bind', pending], ['notify', victim]]);
    const rows = await read([victim!, pending!]);
    const v = rows.get(victim!)!;
    expect(v.outbox.map((o) => o.key)).toEqual([`evict:${victim}:v${v.version}`, `notify:requeued:${victim}:v${v.version}`]);
    expect(v.queued_at.getTime()).toBe(notBefore.getTime());
    const extra = await db.pool.query(`SELECT preempted_by::text AS by, preemption_count AS n FROM jobs WHERE id = $1`, [victim]);
    expect(extra.rows[0]).toEqual({ by: pending, n: 1 });
    const event = await db.pool.query(`SELECT data FROM events WHERE job_id = $1 AND kind = 'job.preempted'`, [victim]);
    expect(event.rows[0].data).toEqual({ from: 'RUNNING', to: 'PENDING', preemptorJobId: pending });
  });

  it('refuses ADMITTED without an admission before writing anything', async () => {
    const [p] = await jobsIn(['PENDING'], 'bare');
    await expect(moveJobs(db.pool, [{ jobId: p!, to: 'ADMITTED', reason: 'x' }])).rejects.toThrow(/needs its admission/);
  });
});

describe('the only writer of jobs.state', () => {
  const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
  const WRITER = 'libs/db/src/lifecycle/transition-writer.ts';

  function files(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (['node_modules', 'generated', 'dist', '.cache'].includes(name)) return [];
      if (statSync(path).isDirectory()) return files(path);
      return /\.(ts|tsx|mjs|js)$/.test(name) ? [path] : [];
    });
  }

  /** SQL that sets jobs.state (UPDATE jobs ... SET ... state =), inserts a job in a chosen state, or a Prisma job update of `state`. */
  function stateWrites(source: string): string[] {
    const found: string[] = [];
    for (const m of source.matchAll(/UPDATE\s+jobs\b(?:\s+(?:AS\s+)?\w+)?\s+SET\b([\s\S]*?)(?:\bFROM\b|\bWHERE\b|\bRETURNING\b|`|'|"|$)/gi)) {
      if (/(^|[\s,(])(?:\w+\.)?state\s*=/i.test(m[1]!)) found.push(m[0].slice(0, 80));
    }
    for (const m of source.matchAll(/INSERT\s+INTO\s+jobs\s*\(([^)]*)\)/gi)) {
      if (/(^|[\s,])state([\s,]|$)/i.test(m[1]!)) found.push(m[0].slice(0, 80));
    }
    for (const m of source.matchAll(/\.job\.(?:update|updateMany|upsert)\(([\s\S]{0,400}?)\)\s*[;,]/g)) {
      if (/\bstate\s*:/.test(m[1]!)) found.push(m[0].slice(0, 80));
    }
    return found;
  }

  it('finds the writes it looks for (the scan can fail)', () => {
    expect(stateWrites("await pool.query(`UPDATE jobs SET state = 'RUNNING' WHERE id = $1`)")).toHaveLength(1);
    expect(stateWrites('UPDATE jobs j SET version = j.version + 1, state = i.to FROM input i')).toHaveLength(1);
    expect(stateWrites("INSERT INTO jobs (id, name, state) VALUES ($1, 'x', 'RUNNING')")).toHaveLength(1);
    expect(stateWrites("await prisma.job.update({ where: { id }, data: { state: 'FAILED' } });")).toHaveLength(1);
    expect(stateWrites("UPDATE jobs SET priority = 1 WHERE state = 'PENDING'")).toEqual([]);
  });

  it(`is ${WRITER}: no code in apps, libs, bench or test writes jobs.state`, () => {
    const offenders = ['apps', 'libs', 'bench', 'test']
      .flatMap((dir) => files(join(ROOT, dir)))
      .map((path) => relative(ROOT, path))
      .filter((path) => path !== WRITER && !path.endsWith('transition-writer.test.ts'))
      .flatMap((path) => stateWrites(readFileSync(join(ROOT, path), 'utf8')).map((sql) => `${path}: ${sql}`));
    expect(offenders).toEqual([]);
  });

  it('and SQL lives only in libs/db: nothing in apps or other libs imports pg or Prisma', () => {
    const importers = ['apps', 'libs']
      .flatMap((dir) => files(join(ROOT, dir)))
      .map((path) => relative(ROOT, path))
      .filter((path) => !path.startsWith('libs/db/') && !path.endsWith('.spec.ts'))
      .filter((path) => /from\s+'(pg|pg\/[^']*|@prisma\/[^']*)'/.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(importers).toEqual([]);
  });
});
