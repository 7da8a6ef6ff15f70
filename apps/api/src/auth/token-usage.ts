import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { TokenRepository } from '#db';
import { LOGGER } from '../infra/tokens.js';
import { ExpiringLru, MAX_CACHED_TOKENS } from './token-cache.js';

/** A token's `lastUsedAt` is written at most once per this long. */
export const LAST_USED_INTERVAL_MS = 60_000;

/**
 * Records when each stored token was last used (`lastUsedAt` in GET /v1/tokens), off the request's path:
 * the write is started and not awaited, and its failure is only logged. At most one write per token per
 * minute: this process remembers the tokens it recorded in the last minute (at most MAX_CACHED_TOKENS of
 * them), and the UPDATE itself writes nothing when another replica recorded a use within the minute.
 */
@Injectable()
export class TokenUsage {
  private readonly recent = new ExpiringLru<true>(MAX_CACHED_TOKENS);

  constructor(
    @Inject(TokenRepository) private readonly tokens: TokenRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The token with this id authenticated a request now. Never throws, never waits. */
  used(tokenId: string): void {
    const now = Date.now();
    if (this.recent.get(tokenId, now) !== undefined) return;
    this.recent.set(tokenId, true, now + LAST_USED_INTERVAL_MS);
    try {
      this.tokens.touch(tokenId, new Date(now), LAST_USED_INTERVAL_MS).catch((error: unknown) => this.failed(tokenId, error));
    } catch (error) {
      this.failed(tokenId, error);
    }
  }

  private failed(tokenId: string, error: unknown): void {
    this.logger.warn({ token: tokenId, reason: error instanceof Error ? error.message.split('\n')[0] : String(error) }, 'could not record the last use of a token');
  }
}
