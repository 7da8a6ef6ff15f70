import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { namesInOrder, sharedIds, sortedCopy, strictlyById } from './sorted-input.js';

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

describe('sortedCopy', () => {
  it('gives what a stable sort of a copy gives, and never touches the input', () => {
    const byName = (a: { name: string; n: number }, b: { name: string; n: number }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const arbItems = fc.array(fc.record({ name: fc.string({ maxLength: 2 }), n: fc.nat() }), { maxLength: 20 });
    fc.assert(
      fc.property(arbItems, fc.boolean(), (items, presort) => {
        const input = presort ? [...items].sort(byName) : items;
        const before = [...input];
        const out = sortedCopy(input, byName, namesInOrder);
        expect(out).toEqual([...input].sort(byName));
        expect(out).not.toBe(input);
        expect(input).toEqual(before);
      }),
    );
  });
});
