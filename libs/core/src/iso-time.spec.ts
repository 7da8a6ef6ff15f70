import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  const date = (ms: number): string => new Date(ms).toISOString();

  it('writes what Date#toISOString writes, at the edges of days, months, leap years and its range', () => {
    const edges = [0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 951_868_800_000, 1_767_268_800_000, 4_107_542_399_999, 253_402_300_799_999];
    for (const ms of edges) expect(isoTime(ms)).toBe(date(ms));
  });

  it('writes what Date#toISOString writes for any whole millisecond from 1970 to 9999', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => isoTime(ms) === date(ms)), { numRuns: 20_000 });
  });

  it('leaves other times to Date: before 1970, after 9999, fractions, and invalid ones throw alike', () => {
    for (const ms of [-1, -62_198_755_200_000, 253_402_300_800_000, 8.64e15, 1.5, -0.5]) expect(isoTime(ms)).toBe(date(ms));
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(Infinity)).toThrow(RangeError);
  });
});
