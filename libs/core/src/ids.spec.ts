import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { sharedIds, strictlyById } from './ids.js';

const jobs = (ids: unknown[]): { id: unknown }[] => ids.map((id) => ({ id }));

describe('strictlyById', () => {
  it('holds only for string ids, each greater than the one before', () => {
    expect(strictlyById([])).toBe(true);
    expect(strictlyById(jobs(['a', 'b', 'c']))).toBe(true);
    expect(strictlyById(jobs(['a', 'a']))).toBe(false);
    expect(strictlyById(jobs(['b', 'a']))).toBe(false);
    expect(strictlyById(jobs([1, 2]))).toBe(false);
    expect(strictlyById(jobs(['a', undefined]))).toBe(false);
  });
});

describe('sharedIds', () => {
  it('finds the items of the first list whose id is in the second, as a set lookup would', () => {
    const sortedIds = fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 30 }).map((xs) => [...xs].sort());
    fc.assert(
      fc.property(sortedIds, sortedIds, (a, b) => {
        const inB = new Set(b);
        expect(sharedIds(jobs(a), jobs(b)).map((j) => j.id)).toEqual(a.filter((id) => inB.has(id)));
      }),
    );
  });
});
