import { describe, expect, it } from '@jest/globals';
import { exponentialBackoffMs } from './backoff.js';

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
