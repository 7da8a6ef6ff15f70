import { Queue, type ConnectionOptions } from 'bullmq';
import type { SideEffectJobData, SideEffectName } from './side-effect-catalogue.js';
import type { OutboxRef } from './outbox-store.js';

export const SIDE_EFFECT_QUEUE = 'qm-side-effects';

export interface QueueSettings {
  connection: ConnectionOptions;
  /** Redis key prefix of every queue (one per deployment; unique per test run). */
  prefix: string;
  /** Delivery attempts of one enqueued entry before it goes back to the outbox's slow retry. */
  attempts: number;
  /** First retry delay; doubles on every attempt. */
  backoffMs: number;
  /**
   * Most time one call waits on Redis (default 2000 ms). Redis holds nothing that matters, so a scheduler
   * whose Redis is down or black-holed must not wait on it: the call fails, the entries stay pending in
   * the Postgres outbox, and reconcile offers them again once Redis answers.
   */
  commandTimeoutMs?: number;
}

/** A queue call that got no answer from Redis in time. */
export class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

/** BullMQ job id of an outbox entry: deterministic, so enqueueing an entry twice is a no-op. */
export function sideEffectJobId(outboxId: string): string {
  return `outbox-${outboxId}`;
}

/** The BullMQ queue that carries side effects. Enqueues outbox entries; never holds state of its own. */
export class SideEffectQueue {
  readonly queue: Queue<SideEffectJobData, void, SideEffectName>;

  constructor(private readonly settings: QueueSettings) {
    this.queue = new Queue<SideEffectJobData, void, SideEffectName>(SIDE_EFFECT_QUEUE, {
      connection: settings.connection,
      prefix: settings.prefix,
      defaultJobOptions: {
        attempts: settings.attempts,
        backoff: { type: 'exponential', delay: settings.backoffMs },
        // Kept a while so that re-enqueueing a finished entry is a no-op; Postgres holds the truth anyway.
        removeOnComplete: { age: 3600, count: 100_000 },
        // Removed at once so reconcile can enqueue the entry again for its slow retry.
        removeOnFail: true,
      },
    });
    // A lost Redis connection is reported by the calls that need it; an unhandled 'error' would crash.
    this.queue.on('error', () => undefined);
  }

  async enqueue(entries: readonly OutboxRef[]): Promise<void> {
    if (entries.length === 0) return;
    await this.bounded('enqueue', this.queue.addBulk(
      entries.map((entry) => ({
        name: entry.kind as SideEffectName,
        data: { outboxId: entry.id },
        opts: { jobId: sideEffectJobId(entry.id) },
      })),
    ));
  }

  /**
   * Entries whose queue job is in no list (`unknown`: its keys were partly lost, e.g. Redis flushed or
   * failed over mid-write) or already finished: if Postgres still says pending, such a job id would make
   * `enqueue` a no-op forever. States are read a batch at a time.
   */
  async finishedOrLost(entries: readonly OutboxRef[]): Promise<OutboxRef[]> {
    const found: OutboxRef[] = [];
    for (let i = 0; i < entries.length; i += 100) {
      const batch = entries.slice(i, i + 100);
      const states = await this.bounded('read job states', Promise.all(batch.map((entry) => this.queue.getJobState(sideEffectJobId(entry.id)))));
      batch.forEach((entry, j) => {
        if (states[j] === 'unknown' || states[j] === 'completed' || states[j] === 'failed') found.push(entry);
      });
    }
    return found;
  }

  /** Replaces the queue jobs of `entries` with fresh ones (after finishedOrLost). */
  async requeue(entries: readonly OutboxRef[]): Promise<void> {
    await this.bounded('remove jobs', Promise.all(entries.map((entry) => this.queue.remove(sideEffectJobId(entry.id)).catch(() => 0))));
    await this.enqueue(entries);
  }

  /**
   * `call`, or a RedisTimeoutError after commandTimeoutMs. The call itself is not cancelled (ioredis
   * keeps it queued until Redis answers; adds are idempotent by job id); its late failure is ignored.
   */
  private bounded<T>(what: string, call: Promise<T>): Promise<T> {
    call.catch(() => undefined);
    const ms = this.settings.commandTimeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisTimeoutError(`Redis did not answer within ${ms} ms (${what})`)), ms);
    });
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
