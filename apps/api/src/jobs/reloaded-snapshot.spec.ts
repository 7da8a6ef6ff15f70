import { describe, expect, it } from '@jest/globals';
import { ReloadedSnapshot } from './reloaded-snapshot.js';

/** A loader whose loads finish when the test says, each answering the table as it was when the load began. */
function table(): { rows: string[]; loads: number; pending: (() => void)[]; load: () => Promise<string[]> } {
  const t = {
    rows: ['a'],
    loads: 0,
    pending: [] as (() => void)[],
    load: (): Promise<string[]> => {
      t.loads += 1;
      const seen = [...t.rows];
      return new Promise((resolve) => t.pending.push(() => resolve(seen)));
    },
  };
  return t;
}

describe('ReloadedSnapshot', () => {
  it('one load in flight is shared; the value is kept for the TTL; TTL 0 reads every time', async () => {
    const t = table();
    const kept = new ReloadedSnapshot(t.load, () => 60_000);
    const both = Promise.all([kept.current(), kept.current()]);
    t.pending.shift()!();
    expect(await both).toEqual([['a'], ['a']]);
    expect(await kept.current()).toEqual(['a']);
    expect(t.loads).toBe(1);

    const uncached = new ReloadedSnapshot(t.load, () => 0);
    for (let i = 0; i < 2; i += 1) {
      const value = uncached.current();
      t.pending.shift()!();
      await value;
    }
    expect(t.loads).toBe(3);
  });

  it('a load that began before an invalidation is answered but not kept: the next read loads the change', async () => {
    const t = table();
    const snapshot = new ReloadedSnapshot(t.load, () => 60_000);
    const early = snapshot.current();
    t.rows = ['a', 'b'];
    snapshot.invalidate();
    t.pending.shift()!();
    expect(await early).toEqual(['a']);
    const next = snapshot.current();
    t.pending.shift()!();
    expect(await next).toEqual(['a', 'b']);
    expect(t.loads).toBe(2);
  });

  it('a failed load is not kept and does not block the next one', async () => {
    let fail = true;
    const snapshot = new ReloadedSnapshot(() => (fail ? Promise.reject(new Error('database unavailable')) : Promise.resolve(1)), () => 60_000);
    await expect(snapshot.current()).rejects.toThrow('database unavailable');
    fail = false;
    expect(await snapshot.current()).toBe(1);
  });
});
