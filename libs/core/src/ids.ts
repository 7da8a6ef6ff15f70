/**
 * Id checks that are linear when the caller hands its jobs over sorted by id (the simulator and the
 * snapshot readers do): strictly increasing string ids are distinct, and two such lists meet by a merge.
 * Anything else (unsorted, duplicates, ids that are not strings) answers false, and the caller takes its
 * general path; the answers never depend on which path was taken.
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
