import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Config } from '#common';
import type { TokenRecord, TokenRepository } from '#db';
import { ExpiringLru, MAX_CACHED_TOKENS, TokenCache } from './token-cache.js';

const TTL = 5000;

/** A token store in memory that counts its reads; `gate` holds reads back until released. */
function store() {
  const rows = new Map<string, TokenRecord>();
  let gate: Promise<void> | null = null;
  const findActiveByHash = jest.fn(async (hash: string): Promise<TokenRecord | null> => {
    const row = rows.get(hash) ?? null; // what the read sees when it runs, before any wait
    if (gate !== null) await gate;
    return row;
  });
  return {
    repo: { findActiveByHash } as unknown as TokenRepository,
    reads: findActiveByHash,
    add(hash: string, subject = 'alice'): void {
      rows.set(hash, { id: `id-${hash}`, subject, role: 'member', teams: ['vision'], createdAt: new Date(0), expiresAt: null, lastUsedAt: null });
    },
    hold(): () => void {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

const cacheOver = (repo: TokenRepository, ttl = TTL): TokenCache => new TokenCache(repo, Config.fromEnv({ QM_ADMIN_TOKEN: 'unit-admin-token-0123456789', QM_TOKEN_CACHE_TTL_MS: String(ttl) }));

describe('ExpiringLru', () => {
  it('keeps at most max entries, dropping the least recently used; expired entries read as missing', () => {
    const lru = new ExpiringLru<number>(3);
    lru.set('a', 1, 100);
    lru.set('b', 2, 100);
    lru.set('c', 3, 100);
    expect(lru.get('a', 0)).toBe(1); // a is now the most recently used
    lru.set('d', 4, 100);
    expect(lru.size).toBe(3);
    expect([lru.get('a', 0), lru.get('b', 0), lru.get('c', 0), lru.get('d', 0)]).toEqual([1, undefined, 3, 4]);
    expect(lru.get('a', 100)).toBeUndefined();
    expect(lru.size).toBe(2); // the expired entry is gone
  });
});

describe('TokenCache', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('remembers an unknown hash for the TTL: 100 lookups, one read; read again once it expired', async () => {
    const s = store();
    const cache = cacheOver(s.repo);
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    for (let i = 0; i < 100; i++) expect(await cache.lookup('unknown')).toBeNull();
    expect(s.reads).toHaveBeenCalledTimes(1);
    now.mockReturnValue(1_000_000 + TTL - 1);
    expect(await cache.lookup('unknown')).toBeNull();
    expect(s.reads).toHaveBeenCalledTimes(1);
    now.mockReturnValue(1_000_000 + TTL);
    expect(await cache.lookup('unknown')).toBeNull();
    expect(s.reads).toHaveBeenCalledTimes(2);
  });

  it('a token stored through this process after its hash was looked up as unknown is usable at once', async () => {
    const s = store();
    const cache = cacheOver(s.repo);
    expect(await cache.lookup('h1')).toBeNull();
    s.add('h1');
    expect(await cache.lookup('h1')).toBeNull(); // stored elsewhere: still unknown here until the TTL ends
    cache.created('h1');
    expect(await cache.lookup('h1')).toMatchObject({ subject: 'alice', tokenId: 'id-h1' });
    expect(s.reads).toHaveBeenCalledTimes(2);
  });

  it('a read that began before a creation does not remember the hash as unknown, and later lookups do not join it', async () => {
    const s = store();
    const cache = cacheOver(s.repo);
    let release = s.hold();
    const early = cache.lookup('h2'); // reads before the token exists, answers after it was created
    s.add('h2');
    cache.created('h2');
    release();
    expect(await early).toBeNull();
    expect(await cache.lookup('h2')).toMatchObject({ tokenId: 'id-h2' });
    expect(s.reads).toHaveBeenCalledTimes(2);

    s.reads.mockClear();
    release = s.hold();
    const before = cache.lookup('h3');
    s.add('h3');
    cache.created('h3');
    const after = cache.lookup('h3'); // a read of its own, which sees the token
    release();
    expect([await before, (await after)?.tokenId]).toEqual([null, 'id-h3']);
    expect(s.reads).toHaveBeenCalledTimes(2);
  });

  it('a token revoked through this process is read again at once; a read that began before the revocation is not kept', async () => {
    const rows = store();
    const cache = cacheOver(rows.repo);
    rows.add('r1');
    expect(await cache.lookup('r1')).toMatchObject({ tokenId: 'id-r1' });
    rows.reads.mockClear();
    // The store no longer has it (revoked): the cached principal goes with the revocation.
    const revoke = (hash: string): void => {
      (rows.repo.findActiveByHash as unknown as jest.Mock<(h: string) => Promise<null>>).mockImplementationOnce(() => Promise.resolve(null));
      cache.revoked(`id-${hash}`);
    };
    revoke('r1');
    expect(await cache.lookup('r1')).toBeNull();
    expect(rows.reads).toHaveBeenCalledTimes(1);

    // A read that saw the token before its revocation answers its own waiters but is not cached.
    rows.add('r2');
    const release = rows.hold();
    const early = cache.lookup('r2');
    cache.revoked('id-r2');
    release();
    expect(await early).toMatchObject({ tokenId: 'id-r2' });
    rows.reads.mockClear();
    await cache.lookup('r2');
    expect(rows.reads).toHaveBeenCalledTimes(1);
  });

  it('concurrent lookups of one hash share one read', async () => {
    const s = store();
    s.add('h5');
    const cache = cacheOver(s.repo);
    const release = s.hold();
    const all = Promise.all([cache.lookup('h5'), cache.lookup('h5'), cache.lookup('nope'), cache.lookup('nope')]);
    release();
    expect((await all).map((p) => p?.tokenId ?? null)).toEqual(['id-h5', 'id-h5', null, null]);
    expect(s.reads).toHaveBeenCalledTimes(2);
  });

  it('a flood of distinct unknown tokens stays bounded and never pushes out a valid one', async () => {
    const s = store();
    s.add('valid');
    const cache = cacheOver(s.repo);
    expect(await cache.lookup('valid')).not.toBeNull();
    for (let i = 0; i <= MAX_CACHED_TOKENS; i++) await cache.lookup(`random-${i}`);
    const unknown = (cache as unknown as { unknown: ExpiringLru<true> }).unknown;
    expect(unknown.size).toBe(MAX_CACHED_TOKENS);
    s.reads.mockClear();
    expect(await cache.lookup('valid')).not.toBeNull();
    expect(await cache.lookup(`random-${MAX_CACHED_TOKENS}`)).toBeNull(); // the newest is kept
    expect(s.reads).toHaveBeenCalledTimes(0);
    expect(await cache.lookup('random-0')).toBeNull(); // the oldest made room
    expect(s.reads).toHaveBeenCalledTimes(1);
  });

  it('TTL 0: every lookup reads', async () => {
    const s = store();
    s.add('h4');
    const cache = cacheOver(s.repo, 0);
    for (let i = 0; i < 3; i++) {
      await cache.lookup('h4');
      await cache.lookup('unknown');
    }
    expect(s.reads).toHaveBeenCalledTimes(6);
  });
});
