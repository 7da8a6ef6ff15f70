import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LOGGER, REDIS, REDIS_PREFIX } from '../infra/tokens.js';
import { TokenCache } from './token-cache.js';

export function tokenRevokedChannel(prefix: string): string {
  return `${prefix}:token-revoked`;
}

/**
 * Token revocations told to every API replica at once, over Redis pub/sub: the replica that revokes
 * publishes the token's id after its commit, and each replica (itself included) drops the token from its
 * TokenCache when the message comes — so a revoked token is refused everywhere within a message's trip, not
 * after QM_TOKEN_CACHE_TTL_MS. A message can be lost only while a replica's subscription is down: when it
 * comes back, that replica forgets every cached token (the next request of each reads its row again), and
 * without Redis the TTL still bounds it.
 */
@Injectable()
export class TokenRevocations implements OnModuleInit, OnModuleDestroy {
  private subscriber: Redis | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_PREFIX) private readonly prefix: string,
    @Inject(TokenCache) private readonly cache: TokenCache,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const channel = tokenRevokedChannel(this.prefix);
    const subscriber = this.redis.duplicate({ lazyConnect: true, maxRetriesPerRequest: null, enableOfflineQueue: true });
    this.subscriber = subscriber;
    subscriber.on('error', (error) => this.logger.debug({ err: error }, 'token revocations: redis error'));
    subscriber.on('message', (_channel: string, id: string) => this.cache.revoked(id));
    // Every connection (the first, and each after a loss) subscribes; what was published while it was down is
    // gone, so after a loss every cached token is forgotten.
    let connections = 0;
    subscriber.on('ready', () => {
      connections += 1;
      if (connections > 1) {
        this.cache.forgetAll();
        this.logger.info('token revocations: connected again; cached tokens forgotten');
      }
      subscriber.subscribe(channel).catch((error: unknown) => this.logger.warn({ err: error }, 'token revocations: cannot subscribe'));
    });
    // Not awaited, and retried by the client: the API serves without Redis (the TTL bounds a revocation then).
    subscriber.connect().catch((error: unknown) => this.logger.warn({ err: error }, 'token revocations: no Redis yet; other replicas refuse a revoked token within QM_TOKEN_CACHE_TTL_MS'));
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }

  /** After the revocation's commit: every replica drops it (this one already has). Never throws. */
  async announce(tokenId: string): Promise<void> {
    try {
      await this.redis.publish(tokenRevokedChannel(this.prefix), tokenId.toLowerCase());
    } catch (error) {
      this.logger.warn({ err: error, tokenId }, 'token revocations: cannot publish; other replicas refuse it within QM_TOKEN_CACHE_TTL_MS');
    }
  }
}
