import { Inject, Injectable } from '@nestjs/common';
import { Config } from '#common';
import { TokenRepository } from '#db';
import type { Principal } from './principal.js';

/** Most token hashes each cache keeps (known ones and unknown ones apart). */
export const MAX_CACHED_TOKENS = 10_000;

/**
 * A map of at most `max` entries, each kept until its expiry; when full, the least recently used entry
 * makes room (a Map iterates in insertion order, and a read moves its entry to the end).
 */
export class ExpiringLru<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key);
    if (hit.expiresAt <= now) return undefined;
    this.entries.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value `drop` says (a scan: for rare events). */
  deleteWhere(drop: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (drop(entry.value)) this.entries.delete(key);
  }
}

/**
 * Stored tokens by the sha256 of their secret, as AuthGuard reads them: a valid token's principal is kept
 * for QM_TOKEN_CACHE_TTL_MS (a burst of submissions costs no extra round trip), and so is the fact that a
 * hash is unknown (or revoked), so a client retrying with a wrong token, or a flood of them, costs Postgres
 * one read per distinct token and TTL, not one per request. Each cache holds at most MAX_CACHED_TOKENS
 * hashes, least recently used out first, and apart, so random tokens never push out valid ones.
 * Concurrent misses of one hash share one read. TTL 0: every request reads.
 *
 * A token created through this process is usable at once here (its hash leaves the unknown cache); one
 * created through another API replica is usable here within the TTL at worst (only if this replica was
 * sent its secret before it existed). A token revoked through this process is refused here at once (and a
 * read that began before the revocation is not kept); every other replica refuses it as soon as
 * TokenRevocations tells it (Redis pub/sub), and within the TTL at worst.
 */
@Injectable()
export class TokenCache {
  private readonly known = new ExpiringLru<Principal>(MAX_CACHED_TOKENS);
  private readonly unknown = new ExpiringLru<true>(MAX_CACHED_TOKENS);
  private readonly lookups = new Map<string, Promise<Principal | null>>();
  /** Bumped by every token created here: a read that began before it does not remember a hash as unknown. */
  private generation = 0;
  /** Bumped by every token revoked here: a read that began before it does not remember a principal. */
  private revocations = 0;

  constructor(
    @Inject(TokenRepository) private readonly tokens: TokenRepository,
    @Inject(Config) private readonly config: Config,
  ) {}

  /** The principal of an unrevoked stored token with this hash (with its expiry: the guard refuses an expired one), or null. */
  async lookup(hash: string): Promise<Principal | null> {
    const now = Date.now();
    const known = this.known.get(hash, now);
    if (known !== undefined) return known;
    if (this.unknown.get(hash, now) !== undefined) return null;
    // One read per token however many requests miss the cache at once (they all do when it expires).
    let pending = this.lookups.get(hash);
    if (pending === undefined) {
      const read: Promise<Principal | null> = this.read(hash, now).finally(() => {
        if (this.lookups.get(hash) === read) this.lookups.delete(hash);
      });
      this.lookups.set(hash, read);
      pending = read;
    }
    return pending;
  }

  /** A token with this hash was just stored through this process: usable from the next request on. */
  created(hash: string): void {
    this.generation += 1;
    this.unknown.delete(hash);
    this.lookups.delete(hash);
  }

  /** The token with this id was revoked through this process: refused from the next request on. */
  revoked(tokenId: string): void {
    this.revocations += 1;
    const id = tokenId.toLowerCase();
    this.known.deleteWhere((p) => p.tokenId !== null && p.tokenId.toLowerCase() === id);
    this.lookups.clear();
  }

  /** Every cached principal dropped (revocations may have been missed): each token's next request reads its row. */
  forgetAll(): void {
    this.revocations += 1;
    this.known.deleteWhere(() => true);
    this.lookups.clear();
  }

  private async read(hash: string, now: number): Promise<Principal | null> {
    const generation = this.generation;
    const revocations = this.revocations;
    const row = await this.tokens.findActiveByHash(hash);
    const principal: Principal | null = row ? { subject: row.subject, role: row.role, teams: row.teams, tokenId: row.id, expiresAt: row.expiresAt } : null;
    const ttl = this.config.tokenCacheTtlMs;
    if (ttl > 0) {
      if (principal !== null) {
        if (revocations === this.revocations) this.known.set(hash, principal, now + ttl);
      }
      else if (generation === this.generation) this.unknown.set(hash, true, now + ttl);
    }
    return principal;
  }
}
