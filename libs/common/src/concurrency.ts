/**
 * Runs `work` on every item with at most `limit` calls in flight (items in order; a slot takes the next
 * item as soon as it is free). Resolves when all are done; rejects with the first failure once the calls in
 * flight have settled (no call starts after a failure). For I/O passes over many objects (API reads, one
 * import per gang) that must neither go one at a time nor all at once.
 */
export async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<unknown>): Promise<void> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  let next = 0;
  let failed: { error: unknown } | null = null;
  const slot = async (): Promise<void> => {
    while (failed === null && next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, slot));
  if (failed !== null) throw (failed as { error: unknown }).error;
}
