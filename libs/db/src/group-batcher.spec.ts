import { describe, expect, it } from '@jest/globals';
import { GroupBatcher } from './group-batcher.js';

describe('GroupBatcher', () => {
  it('runs a lone call at once, and groups the calls that waited for a slot', async () => {
    const groups: number[][] = [];
    const batcher = new GroupBatcher<number, number>(async (group) => {
      groups.push([...group]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return group.map((n) => n * 10);
    }, { maxGroup: 3, maxInFlight: 1 });
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => batcher.call(n)));
    expect(answers).toEqual([10, 20, 30, 40, 50, 60]);
    expect(groups).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('runs each call of a failed group alone, so one bad input fails only its own call', async () => {
    const batcher = new GroupBatcher<number, number>((group) => (group.includes(13) ? Promise.reject(new Error('unlucky')) : Promise.resolve([...group])), { maxGroup: 10, maxInFlight: 1 });
    const results = await Promise.allSettled([1, 2, 13, 4].map((n) => batcher.call(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  });

  it('refuses calls beyond the queue bound with the error it is given', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new GroupBatcher<number, number>(async (group) => {
      await gate;
      return [...group];
    }, { maxGroup: 10, maxInFlight: 1, maxQueued: 2, full: (n) => new RangeError(`${n} waiting`) });
    const calls = [1, 2, 3, 4].map((n) => batcher.call(n));
    await expect(calls[3]).rejects.toThrow(new RangeError('2 waiting'));
    release();
    expect(await Promise.all(calls.slice(0, 3))).toEqual([1, 2, 3]);
  });

  it('fails the group when the answer count does not match', async () => {
    const batcher = new GroupBatcher<number, number>(() => Promise.resolve([]), { maxGroup: 10, maxInFlight: 1 });
    await expect(batcher.call(1)).rejects.toThrow(/got 0 answers/);
  });
});
