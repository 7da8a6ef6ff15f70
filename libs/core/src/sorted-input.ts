/**
 * Checks that are linear when the caller hands its inputs over sorted (the simulator and the snapshot
 * readers do): strictly increasing string ids are distinct, two such lists meet by a merge, and a list
 * already in order needs no sort. Anything else (unsorted, duplicates, ids or names that are not strings)
 * takes the general path; the answers never depend on which path was taken.
 */

/** Whether every id is a string and each is greater than the one before (so no two are equal). */
export function strictlyById(jobs: readonly { id: unknown }[]): boolean {
  let prev: string | undefined;
  for (let i = 0; i < jobs.length; i++) {
    const id = jobs[i]!.id;
    if (typeof id !== 'string' || (prev !== undefined && !(prev < id))) return false;
    prev = id;
  }
  return true;
}

/** The items of `a` whose id is also in `b`; both strictly by id (`strictlyById`). */
export function sharedIds<T extends { id: unknown }>(a: readonly T[], b: readonly { id: unknown }[]): T[] {
  const out: T[] = [];
  let j = 0;
  for (const x of a) {
    const id = x.id as string;
    while (j < b.length && (b[j]!.id as string) < id) j++;
    if (j === b.length) break;
    if (b[j]!.id === id) out.push(x);
  }
  return out;
}

/**
 * A stable sort by `cmp` of a copy of `items`. When `inOrder` holds for every neighbour pair, the input
 * is already in that order and is only copied (a comparator sort costs ~60 ns a comparison even then).
 * `inOrder(a, b)` must imply that `cmp(a, b) <= 0` and compare by a total order (strings by `<`), so that
 * the pairs holding makes the whole list sorted.
 */
export function sortedCopy<T>(items: readonly T[], cmp: (a: T, b: T) => number, inOrder: (a: T, b: T) => boolean): T[] {
  for (let i = 1; i < items.length; i++) {
    if (!inOrder(items[i - 1]!, items[i]!)) return [...items].sort(cmp);
  }
  return [...items];
}

/** For `sortedCopy` by name: both names are strings and `a`'s is not after `b`'s. */
export const namesInOrder = (a: { name: unknown }, b: { name: unknown }): boolean =>
  typeof a.name === 'string' && typeof b.name === 'string' && !(a.name > b.name);
