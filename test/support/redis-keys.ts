import { Redis } from 'ioredis';

const RUN_REDIS = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Every key of a test run's prefix (`<prefix>:*`) in the Redis at `url` (default: the run's REDIS_URL). */
export async function keysOf(url: string, prefix: string): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key of the prefix: the test's FLUSHDB, without touching other runs or the server. Returns how many. */
export async function flushPrefix(prefix: string, url: string = RUN_REDIS): Promise<number> {
  const keys = await keysOf(url, prefix);
  if (keys.length === 0) return 0;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let deleted = 0;
    for (let i = 0; i < keys.length; i += 500) deleted += await redis.del(...keys.slice(i, i + 500));
    return deleted;
  } finally {
    redis.disconnect();
  }
}
