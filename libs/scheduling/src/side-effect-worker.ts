import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { exponentialBackoffMs } from './backoff.js';
import { isSideEffectName, parseSideEffectPayload, type SideEffectJobData, type SideEffectName } from './side-effect-catalogue.js';
import { NotReadyYetError, PermanentSideEffectError, type SideEffectHandlerRegistry } from './side-effect-handlers.js';
import type { OutboxStore } from './outbox-store.js';
import { SIDE_EFFECT_QUEUE, type QueueSettings } from './side-effect-queue.js';

export interface SideEffectObserver {
  onDone(kind: string, attempt: number): void;
  /** `final`: no more queue attempts (the outbox's slow retry or a permanent failure follows). */
  onFailed(kind: string, final: boolean): void;
}

export type ProcessOutcome = 'done' | 'already-done' | 'missing';

/**
 * Carries out one outbox entry: re-reads it, skips it when already done, runs the handler of its kind,
 * then marks it done. The handler runs before the mark, so a crash in between repeats the handler —
 * which is why handlers are idempotent.
 */
export async function processOutboxEntry(
  store: OutboxStore,
  registry: SideEffectHandlerRegistry,
  outboxId: string,
  attempt: number,
): Promise<ProcessOutcome> {
  const entry = await store.get(outboxId);
  if (!entry) return 'missing';
  if (entry.status !== 'pending') return 'already-done';
  if (!isSideEffectName(entry.kind)) throw new PermanentSideEffectError(`outbox ${outboxId} has unknown kind "${entry.kind}"`);
  await dispatch(registry, entry.kind, entry.payload, outboxId, attempt);
  await store.markDone(outboxId);
  return 'done';
}

async function dispatch<N extends SideEffectName>(
  registry: SideEffectHandlerRegistry,
  kind: N,
  rawPayload: unknown,
  outboxId: string,
  attempt: number,
): Promise<void> {
  let payload;
  try {
    payload = parseSideEffectPayload(kind, rawPayload);
  } catch (error) {
    throw new PermanentSideEffectError((error as Error).message);
  }
  await registry.get(kind).handle(payload, { outboxId, attempt });
}

/** First look again at an entry whose handler said it is not ready yet (NotReadyYetError), doubling per look… */
export const NOT_READY_POLL_MS = 50;
/** …up to this while the wait is young (a controller making a gang's pods: seconds)… */
export const NOT_READY_POLL_MAX_MS = 250;
/** …and this once it has lasted NOT_READY_SLOW_AFTER_POLLS looks (~30 s: a controller that is not making them). */
export const NOT_READY_SLOW_POLL_MS = 2000;
export const NOT_READY_SLOW_AFTER_POLLS = 120;

/** How long until the entry's next look after `polls` looks that found it not ready. */
export function notReadyDelayMs(polls: number): number {
  if (polls >= NOT_READY_SLOW_AFTER_POLLS) return NOT_READY_SLOW_POLL_MS;
  return Math.min(NOT_READY_POLL_MAX_MS, NOT_READY_POLL_MS * 2 ** Math.max(0, polls));
}

export interface SideEffectWorkerOptions {
  concurrency: number;
  /** After the queue's attempts are used up, the outbox entry is retried no sooner than this (doubling). */
  slowRetryBaseMs: number;
  slowRetryMaxMs: number;
}

/**
 * Most entries one BullMQ worker takes at a time. A BullMQ worker takes entries one after another (a Redis round
 * trip each) until it holds `concurrency` of them or the queue is empty, and only then starts on the first;
 * the lock of an entry taken but not started is not renewed. While a REST submission kept the process busy and
 * cycles kept adding entries (bench:k8s pods, 1,000 jobs), one worker of concurrency 128 took entries for the
 * whole 20 s of the submission — each round trip waiting for a turn of the busy event loop — and started none:
 * no pod was bound meanwhile, and the first entries' 10 s locks expired (stalled, delivered again). Several
 * workers of at most this many each start on their first entries after this many round trips.
 */
export const ENTRIES_PER_BULLMQ_WORKER = 16;

/** A BullMQ worker over the side-effect queue. Any number of these may run, in any process. */
export class SideEffectWorker {
  /** `concurrency` split over workers of at most ENTRIES_PER_BULLMQ_WORKER entries. */
  private readonly workers: Worker<SideEffectJobData, ProcessOutcome, SideEffectName>[];

  constructor(
    private readonly store: OutboxStore,
    private readonly registry: SideEffectHandlerRegistry,
    private readonly queueSettings: QueueSettings,
    private readonly options: SideEffectWorkerOptions,
    private readonly logger: Logger,
    private readonly observer?: SideEffectObserver,
  ) {
    const count = Math.max(1, Math.ceil(options.concurrency / ENTRIES_PER_BULLMQ_WORKER));
    this.workers = Array.from({ length: count }, (_, i) => {
      // The concurrency spread evenly: 128 → 8 × 16, 20 → 10 + 10.
      const concurrency = Math.floor(options.concurrency / count) + (i < options.concurrency % count ? 1 : 0);
      const worker = new Worker<SideEffectJobData, ProcessOutcome, SideEffectName>(SIDE_EFFECT_QUEUE, (job, token) => this.process(job, token), {
        connection: queueSettings.connection,
        prefix: queueSettings.prefix,
        concurrency: Math.max(1, concurrency),
        autorun: false,
        // A worker that dies mid-entry: its job is re-delivered after at most ~lockDuration + stalledInterval.
        lockDuration: 10_000,
        stalledInterval: 5_000,
      });
      worker.on('failed', (job, error) => {
        if (job) void this.onFailed(job, error);
      });
      worker.on('error', (error) => this.logger.warn({ err: error }, 'side-effect worker error'));
      return worker;
    });
  }

  start(): void {
    for (const worker of this.workers) {
      void worker.run().catch((error: unknown) => this.logger.error({ err: error }, 'side-effect worker stopped'));
    }
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
    await this.registry.close();
  }

  private async process(job: Job<SideEffectJobData, ProcessOutcome, SideEffectName>, token: string | undefined): Promise<ProcessOutcome> {
    const attempt = job.attemptsMade + 1;
    try {
      const outcome = await processOutboxEntry(this.store, this.registry, job.data.outboxId, attempt);
      if (outcome === 'done') this.observer?.onDone(job.name, attempt);
      this.logger.debug({ outbox: job.data.outboxId, kind: job.name, attempt, outcome }, 'side effect processed');
      return outcome;
    } catch (error) {
      if (error instanceof PermanentSideEffectError) throw new UnrecoverableError(error.message);
      if (error instanceof NotReadyYetError && token !== undefined) {
        // Looked at again soon, the attempt not spent (moveToDelayed skips it); DelayedError tells BullMQ so.
        const polls = job.data.polls ?? 0;
        await job.updateData({ ...job.data, polls: polls + 1 });
        await job.moveToDelayed(Date.now() + notReadyDelayMs(polls), token);
        this.logger.debug({ outbox: job.data.outboxId, kind: job.name, polls: polls + 1, reason: error.message }, 'side effect not ready yet');
        throw new DelayedError();
      }
      throw error;
    }
  }

  private async onFailed(job: Job<SideEffectJobData, ProcessOutcome, SideEffectName>, error: Error): Promise<void> {
    const attempts = job.opts.attempts ?? 1;
    const permanent = error instanceof UnrecoverableError || error.name === 'UnrecoverableError';
    const final = permanent || job.attemptsMade >= attempts;
    this.observer?.onFailed(job.name, final);
    this.logger.warn({ outbox: job.data.outboxId, kind: job.name, attempt: job.attemptsMade, final, permanent, err: error }, 'side effect failed');
    if (!final) return;
    const round = Math.max(1, Math.ceil(job.attemptsMade / attempts));
    const retryAt = permanent
      ? null
      : new Date(Date.now() + exponentialBackoffMs(round, this.options.slowRetryBaseMs, this.options.slowRetryMaxMs));
    await this.store.recordFailure(job.data.outboxId, error.message, retryAt).catch((recordError: unknown) => {
      this.logger.error({ err: recordError, outbox: job.data.outboxId }, 'could not record a side-effect failure');
    });
  }
}
