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
  }

  async enqueue(entries: readonly OutboxRef[]): Promise<void> {
    if (entries.length === 0) return;
    await this.queue.addBulk(
      entries.map((entry) => ({
        name: entry.kind as SideEffectName,
        data: { outboxId: entry.id },
        opts: { jobId: sideEffectJobId(entry.id) },
      })),
    );
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
      const states = await Promise.all(batch.map((entry) => this.queue.getJobState(sideEffectJobId(entry.id))));
      batch.forEach((entry, j) => {
        if (states[j] === 'unknown' || states[j] === 'completed' || states[j] === 'failed') found.push(entry);
      });
    }
    return found;
  }

  /** Replaces the queue jobs of `entries` with fresh ones (after finishedOrLost). */
  async requeue(entries: readonly OutboxRef[]): Promise<void> {
    await Promise.all(entries.map((entry) => this.queue.remove(sideEffectJobId(entry.id)).catch(() => 0)));
    await this.enqueue(entries);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
