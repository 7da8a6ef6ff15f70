import type { Logger } from 'pino';
import type { OutboxRef, OutboxStore } from './outbox-store.js';
import type { SideEffectQueue } from './side-effect-queue.js';

/**
 * Moves committed outbox entries into the queue. Two paths, both idempotent (the BullMQ job id is the
 * outbox id):
 * - fast: right after a commit, the entries that commit created;
 * - full: on start and periodically (reconcile), every pending entry that is due — this is what makes a
 *   flushed Redis or a crash between commit and enqueue lose nothing.
 */
export class OutboxRelay {
  constructor(
    private readonly store: OutboxStore,
    private readonly queue: SideEffectQueue,
    private readonly logger: Logger,
    private readonly pageSize = 2000,
    /** A due entry still pending this long after it became due gets its queue job checked (see repair). */
    private readonly staleAfterMs = 10_000,
  ) {}

  async enqueueCommitted(entries: readonly OutboxRef[]): Promise<void> {
    await this.queue.enqueue(entries);
  }

  /** Enqueues every due pending entry; returns how many were (re-)offered to the queue. */
  async enqueueAllDue(now: Date): Promise<number> {
    let afterId: string | undefined;
    let total = 0;
    for (;;) {
      const page = await this.store.listDue(now, this.pageSize, afterId);
      if (page.length === 0) break;
      await this.queue.enqueue(page);
      const stale = page.filter((e) => e.availableAt !== undefined && now.getTime() - e.availableAt.getTime() > this.staleAfterMs);
      if (stale.length > 0) {
        const repaired = await this.repair(stale);
        if (repaired > 0) this.logger.warn({ repaired }, 'outbox entries whose queue job was lost or finished were enqueued again');
      }
      total += page.length;
      afterId = page[page.length - 1]!.id;
      if (page.length < this.pageSize) break;
    }
    if (total > 0) this.logger.debug({ entries: total }, 'outbox entries offered to the queue');
    return total;
  }

  /**
   * Re-enqueues stale entries whose queue job is lost or finished. The job is checked first and Postgres
   * after: a job completes only once its entry is marked done, so an entry still pending after its job
   * was seen finished really needs a new job — without the re-read, entries finished while the page was
   * being checked were run a second time.
   */
  private async repair(stale: readonly OutboxRef[]): Promise<number> {
    const candidates = await this.queue.finishedOrLost(stale);
    if (candidates.length === 0) return 0;
    const pending = await this.store.stillPending(candidates.map((e) => e.id));
    const repair = candidates.filter((e) => pending.has(e.id));
    await this.queue.requeue(repair);
    return repair.length;
  }
}
