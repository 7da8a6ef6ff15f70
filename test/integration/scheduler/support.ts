import { randomBytes } from 'node:crypto';
import { pino } from 'pino';

export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
export const silentLogger = pino({ level: 'silent' });

/** A Redis key prefix unique to this test run. */
export function uniquePrefix(label: string): string {
  return `qmtest-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export { flushPrefix } from '../../support/redis-keys.js';

/** Polls `probe` until it returns a truthy value; throws with `what` after `timeoutMs`. Not a timing assertion. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
