import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { Database, createTestDatabase, type TestDatabase } from '#db';
import {
  OutboxRelay,
  PgOutboxStore,
  SideEffectHandlerRegistry,
  SideEffectQueue,
  SideEffectWorker,
  NotReadyYetError,
  PermanentSideEffectError,
  SIDE_EFFECT_QUEUE,
  redisConnection,
  sideEffectJobId,
  standaloneHandlers,
  type AnySideEffectHandler,
  type OutboxRef,
  type QueueSettings,
} from '#scheduling';
import { REDIS_URL, flushPrefix, silentLogger, uniquePrefix, waitFor } from './support.js';

let testDb: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase({ label: 'sched_fx' });
  db = new Database(testDb.url, { poolSize: 8 });
});

afterAll(async () => {
  await db.close();
  await testDb.drop();
});

async function insertOutbox(n: number, kind: string, tag: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO outbox (kind, payload, dedupe_key)
     SELECT $1, jsonb_build_object('jobId', gen_random_uuid()::text), $2 || ':' || g FROM generate_series(1, $3) g
     RETURNING id::text AS id`,
    [kind, tag, n],
  );
  return rows.map((r) => r.id);
}

async function statuses(ids: string[]): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ status: string; n: number }>(
    'SELECT status::text AS status, count(*)::int AS n FROM outbox WHERE id = ANY($1::bigint[]) GROUP BY 1',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/**
 * What a test opened, closed after it even when it fails; and the entries it left pending, removed — a
 * failed test's running worker or pending entries would otherwise be picked up by the next test's relay
 * (`enqueueAllDue` offers every due entry) and run by its handlers.
 */
const opened: Array<{ close(): Promise<void> }> = [];
function closedAfterTest<T extends { close(): Promise<void> }>(resource: T): T {
  const close = resource.close.bind(resource);
  let closing: Promise<void> | undefined;
  resource.close = () => (closing ??= close());
  opened.push(resource);
  return resource;
}

afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
  await db.pool.query(`DELETE FROM outbox WHERE status <> 'done'`);
});

function queueFor(prefix: string): SideEffectQueue {
  return closedAfterTest(new SideEffectQueue(settings(prefix)));
}

function settings(prefix: string): QueueSettings {
  return { connection: redisConnection(REDIS_URL), prefix, attempts: 3, backoffMs: 10 };
}

function worker(prefix: string, handlers: AnySideEffectHandler[]): SideEffectWorker {
  return closedAfterTest(new SideEffectWorker(new PgOutboxStore(db.pool), SideEffectHandlerRegistry.create(handlers), settings(prefix), { concurrency: 8, slowRetryBaseMs: 50, slowRetryMaxMs: 100 }, silentLogger));
}

describe('outbox → BullMQ → handlers (real Postgres and Redis)', () => {
  it('carries out every committed entry exactly to done, even when Redis is flushed mid-way', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger, 100);
    const ids = [...(await insertOutbox(300, 'bind', 'flush-a')), ...(await insertOutbox(50, 'evict', 'flush-b'))];

    await relay.enqueueAllDue(new Date());
    const flushed = await flushPrefix(prefix); // nothing ran yet: every queued job is lost
    expect(flushed).toBeGreaterThan(0);

    const w = worker(prefix, standaloneHandlers());
    w.start();
    // Reconcile's full pass re-offers what Postgres still has pending.
    await waitFor('all entries done after the flush', async () => {
      await relay.enqueueAllDue(new Date());
      const s = await statuses(ids);
      return s['done'] === ids.length;
    }, 150_000); // 350 entries took 29 s at load 20 on 2 cores
    // Offering them again is a no-op: nothing turns back to pending, nothing runs twice.
    await relay.enqueueAllDue(new Date());
    expect(await statuses(ids)).toEqual({ done: ids.length });
    await w.close();
    await queue.close();
  }, 180_000);

  it('enqueues an entry once however often it is offered (job id = outbox id), and handlers see each entry once when all goes well', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger);
    const ids = await insertOutbox(40, 'notify', 'dup');
    const refs = ids.map((id) => ({ id, kind: 'notify' }));
    await Promise.all([relay.enqueueCommitted(refs), relay.enqueueCommitted(refs), relay.enqueueCommitted(refs)]);
    expect(await queue.queue.getJobCountByTypes('waiting', 'prioritized', 'delayed', 'active', 'completed')).toBe(40);

    const seen = new Map<string, number>();
    const counting = standaloneHandlers().map((h): AnySideEffectHandler =>
      h.name === 'notify'
        ? { name: 'notify', handle: (_payload, ctx) => (seen.set(ctx.outboxId, (seen.get(ctx.outboxId) ?? 0) + 1), Promise.resolve()) }
        : h,
    );
    const w = worker(prefix, counting);
    w.start();
    await waitFor('notify entries done', async () => (await statuses(ids))['done'] === ids.length);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(seen.size).toBe(40);
    await w.close();
    await queue.close();
  });

  it('retries a failing handler with backoff until it succeeds, and marks a permanent failure failed with its error', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger);
    const [flaky] = await insertOutbox(1, 'bind', 'flaky');
    const [broken] = await insertOutbox(1, 'evict', 'broken');
    let bindCalls = 0;
    const handlers = standaloneHandlers().map((h): AnySideEffectHandler => {
      if (h.name === 'bind') return { name: 'bind', handle: () => (++bindCalls < 3 ? Promise.reject(new Error('apiserver unavailable')) : Promise.resolve()) };
      if (h.name === 'evict') return { name: 'evict', handle: () => Promise.reject(new PermanentSideEffectError('pod spec invalid')) };
      return h;
    });
    const w = worker(prefix, handlers);
    w.start();
    await relay.enqueueAllDue(new Date());
    await waitFor('flaky done and broken failed', async () => {
      const s = await statuses([flaky!, broken!]);
      return s['done'] === 1 && s['failed'] === 1;
    });
    expect(bindCalls).toBe(3);
    const { rows } = await db.pool.query<{ last_error: string }>('SELECT last_error FROM outbox WHERE id = $1', [broken]);
    expect(rows[0]!.last_error).toMatch(/pod spec invalid/);
    await w.close();
    await queue.close();
  });

  it('puts an entry whose queue attempts ran out back to the outbox for a slow retry, and reconcile finishes it', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger);
    const [id] = await insertOutbox(1, 'delete', 'slow');
    let calls = 0;
    const handlers = standaloneHandlers().map((h): AnySideEffectHandler =>
      h.name === 'delete' ? { name: 'delete', handle: () => (++calls <= 3 ? Promise.reject(new Error('timeout')) : Promise.resolve()) } : h,
    );
    const w = worker(prefix, handlers);
    w.start();
    await relay.enqueueAllDue(new Date());
    await waitFor('three failed attempts recorded', async () => {
      const { rows } = await db.pool.query<{ attempts: number; status: string }>('SELECT attempts, status::text AS status FROM outbox WHERE id = $1', [id]);
      return rows[0]!.attempts >= 1 && rows[0]!.status === 'pending' && calls >= 3;
    });
    await waitFor('done after the slow retry', async () => {
      await relay.enqueueAllDue(new Date());
      return (await statuses([id!]))['done'] === 1;
    });
    expect(calls).toBe(4);
    await w.close();
    await queue.close();
  });

  it('looks again soon at an entry whose handler is not ready yet, without spending its attempts (no failure, no slow retry)', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger);
    const [id] = await insertOutbox(1, 'bind', 'not-ready');
    // Six looks find the gang's pods missing — twice the queue's 3 attempts — then they are there.
    let calls = 0;
    const handlers = standaloneHandlers().map((h): AnySideEffectHandler =>
      h.name === 'bind' ? { name: 'bind', handle: () => (++calls <= 6 ? Promise.reject(new NotReadyYetError('waiting for 8 pods')) : Promise.resolve()) } : h,
    );
    const w = worker(prefix, handlers);
    w.start();
    await relay.enqueueAllDue(new Date()); // offered once: no reconcile pass brings it back
    await waitFor('done after the pods came', async () => (await statuses([id!]))['done'] === 1);
    expect(calls).toBe(7);
    const { rows } = await db.pool.query<{ attempts: number; last_error: string | null }>('SELECT attempts, last_error FROM outbox WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ attempts: 1, last_error: null }); // the one that did it
    const job = await queue.queue.getJob(sideEffectJobId(id!));
    expect(job?.attemptsMade).toBe(1); // the looks that found it not ready are not attempts
    expect(job?.data.polls).toBe(6);
    await w.close();
    await queue.close();
  });

  it('repairs an entry whose queue job lost its list entry but kept its hash (a partial flush), which re-adding alone cannot fix', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger, 100, 0);
    const ids = await insertOutbox(5, 'bind', 'orphan');
    await relay.enqueueCommitted(ids.map((id) => ({ id, kind: 'bind' })));
    const redis = new Redis(REDIS_URL);
    await redis.del(`${prefix}:${SIDE_EFFECT_QUEUE}:wait`, `${prefix}:${SIDE_EFFECT_QUEUE}:marker`); // the job hashes survive
    redis.disconnect();
    expect(await queue.queue.getJobState(sideEffectJobId(ids[0]!))).toBe('unknown');

    const w = worker(prefix, standaloneHandlers());
    w.start();
    try {
      await waitFor('orphaned entries done', async () => {
        await relay.enqueueAllDue(new Date());
        return (await statuses(ids))['done'] === ids.length;
      });
    } finally {
      await w.close();
      await queue.close();
    }
  });

  it('does not run again an entry that finished while its page was being checked (a stale listing)', async () => {
    const prefix = uniquePrefix('fx');
    const queue = queueFor(prefix);
    const [id] = await insertOutbox(1, 'notify', 'raced');
    const ref = { id: id!, kind: 'notify', availableAt: new Date(Date.now() - 60_000) };
    await new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger).enqueueCommitted([ref]);
    const w = worker(prefix, standaloneHandlers());
    w.start();
    await waitFor('entry done', async () => (await statuses([id!]))['done'] === 1);
    await w.close();
    expect(await queue.queue.getJobState(sideEffectJobId(id!))).toBe('completed');
    // The listing was read while the entry was still pending; by the check, its job has completed.
    class StaleListing extends PgOutboxStore {
      override listDue(): Promise<OutboxRef[]> {
        return Promise.resolve([ref]);
      }
    }
    await new OutboxRelay(new StaleListing(db.pool), queue, silentLogger, 100, 0).enqueueAllDue(new Date());
    expect(await queue.queue.getJobState(sideEffectJobId(id!))).toBe('completed');
    await queue.close();
  });

  it('a worker of concurrency 128 takes entries as 8 BullMQ workers of 16 (one of 128 took 128 entries before it started on any)', async () => {
    const prefix = uniquePrefix('fx-split');
    const queue = new SideEffectQueue(settings(prefix));
    const relay = new OutboxRelay(new PgOutboxStore(db.pool), queue, silentLogger, 500);
    const w = new SideEffectWorker(new PgOutboxStore(db.pool), SideEffectHandlerRegistry.create(standaloneHandlers()), settings(prefix), { concurrency: 128, slowRetryBaseMs: 50, slowRetryMaxMs: 100 }, silentLogger);
    try {
      w.start();
      await w.waitUntilReady();
      // Each BullMQ worker is a named Redis client of the queue (its blocking connection).
      await waitFor('8 workers connected', async () => ((await queue.queue.getWorkersCount()) === 8 ? true : undefined));
      const ids = await insertOutbox(200, 'bind', 'split');
      await relay.enqueueAllDue(new Date());
      await waitFor('all 200 entries done', async () => ((await statuses(ids)).done === 200 ? true : undefined));
    } finally {
      await w.close();
      await queue.close();
      await flushPrefix(prefix);
    }
  }, 60_000);
});
