import { describe, expect, it } from '@jest/globals';
import { exponentialBackoffMs } from './backoff.js';
import { notReadyDelayMs } from './side-effect-worker.js';

describe('exponentialBackoffMs', () => {
  it.each([
    { attempt: 1, want: 100 },
    { attempt: 2, want: 200 },
    { attempt: 4, want: 800 },
    { attempt: 5, want: 1000 },
    { attempt: 500, want: 1000 },
    { attempt: 0, want: 100 },
  ])('attempt $attempt waits $want ms (base 100, max 1000)', ({ attempt, want }) => {
    expect(exponentialBackoffMs(attempt, 100, 1000)).toBe(want);
  });

  it('rejects a max below the base', () => {
    expect(() => exponentialBackoffMs(1, 100, 10)).toThrow(/maxMs/);
  });
});

describe('notReadyDelayMs', () => {
  it('looks again after 50 ms, doubling to 250 ms, and every 2 s once the wait has lasted 120 looks', () => {
    expect([0, 1, 2, 3, 4, 50].map(notReadyDelayMs)).toEqual([50, 100, 200, 250, 250, 250]);
    expect(notReadyDelayMs(119)).toBe(250);
    expect(notReadyDelayMs(120)).toBe(2000);
  });
});
