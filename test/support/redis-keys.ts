import { Redis } from 'ioredis';

/** Every key of a test run's prefix (`<prefix>:*`) in the Redis at `url`. */
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

/** Deletes a test run's keys when it ends: its FLUSHDB, without touching other runs or the server. */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const keys = await keysOf(url, prefix);
  if (keys.length === 0) return;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}
