import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Cycle triggers over Redis pub/sub. The API publishes after its commit (job submitted, cancelled,
 * finished; quota, team or node changed); the leader's CycleLoop debounces them. A lost message costs
 * at most one tick: the loop also runs periodically, and Postgres holds every job.
 */
export type CycleTriggerReason =
  | 'job.submitted'
  | 'job.cancelled'
  | 'job.finished'
  | 'job.status'
  | 'quota.changed'
  | 'team.changed'
  | 'node.changed'
  | 'flavor.changed'
  | 'manual';

export function cycleTriggerChannel(prefix: string): string {
  return `${prefix}:cycle-trigger`;
}

/** Used by the API after each committed change that may let a job start. Never throws: logs instead. */
export class CycleTriggerPublisher {
  private readonly redis: Redis;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    this.redis = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true });
    this.redis.on('error', (error) => this.logger.debug({ err: error }, 'cycle trigger publisher: redis error'));
  }

  async publish(reason: CycleTriggerReason): Promise<void> {
    try {
      await this.redis.publish(cycleTriggerChannel(this.prefix), reason);
    } catch (error) {
      this.logger.warn({ err: error, reason }, 'could not publish a cycle trigger (the periodic tick will cover it)');
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/** Subscribes to cycle triggers and hands each to `onTrigger`. */
export class CycleTriggerSubscriber {
  private readonly redis: Redis;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly onTrigger: (reason: string) => void,
    private readonly logger: Logger,
  ) {
    this.redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: null });
    this.redis.on('error', (error) => this.logger.debug({ err: error }, 'cycle trigger subscriber: redis error'));
    this.redis.on('message', (_channel: string, message: string) => this.onTrigger(message));
  }

  async start(): Promise<void> {
    await this.redis.connect();
    await this.redis.subscribe(cycleTriggerChannel(this.prefix));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
