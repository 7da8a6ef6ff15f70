import { describe, expect, it } from '@jest/globals';
import { eachLimited } from './concurrency.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('eachLimited', () => {
  it('runs every item, never more than `limit` at a time, and several at once when it may', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    await eachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await tick();
      seen.push(n);
      inFlight--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    await expect(
      eachLimited([1, 2, 3, 4, 5], 2, async (n) => {
        started.push(n);
        if (n === 1) throw new Error('one failed');
        await tick();
      }),
    ).rejects.toThrow('one failed');
    expect(started).toEqual([1, 2]);
  });

  it('does nothing for no items and refuses a limit below 1', async () => {
    await expect(eachLimited([], 4, () => Promise.reject(new Error('never')))).resolves.toBeUndefined();
    await expect(eachLimited([1], 0, () => Promise.resolve())).rejects.toThrow(RangeError);
  });
});
