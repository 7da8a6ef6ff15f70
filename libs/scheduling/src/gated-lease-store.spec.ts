import { describe, expect, it } from '@jest/globals';
import { GatedLeaseStore } from './gated-lease-store.js';
import { MemoryLeases } from './testing/memory-leases.js';

describe('GatedLeaseStore (gate elects, fence fences)', () => {
  function world() {
    let now = 0;
    const clock = (): number => now;
    const gate = new MemoryLeases(clock);
    const fence = new MemoryLeases(clock);
    const names: string[] = [];
    const store = (): GatedLeaseStore => new GatedLeaseStore(gate, fence, (name) => (names.push(name), `k8s-${name}`));
    return { gate, fence, a: store(), b: store(), names, advance: (ms: number) => (now += ms) };
  }

  it('leads only with both leases; the token is the fence\'s; the gate lease has its own name', async () => {
    const w = world();
    w.fence.row = { holder: 'old', token: 41n, expiresAt: 0 }; // an expired earlier leader: the next token is 42
    const a = await w.a.acquireOrRenew('scheduler', 'a', 3000);
    expect(a).toMatchObject({ held: true, holder: 'a', fencingToken: 42n });
    expect(w.gate.row?.token).toBe(1n);
    expect(w.names).toEqual(['scheduler']);
    const b = await w.b.acquireOrRenew('scheduler', 'b', 3000);
    expect(b).toMatchObject({ held: false, holder: 'a', fencingToken: 0n });
    expect(w.fence.row?.holder).toBe('a'); // b never touched the fence
  });

  it('a holder that loses the gate gives the fence back, and the new gate holder leads with a larger token', async () => {
    const w = world();
    await w.a.acquireOrRenew('scheduler', 'a', 3000);
    // a's gate renewals stop reaching the gate (e.g. the API server), its fence is still valid.
    w.gate.row!.expiresAt = 0;
    w.advance(1000);
    expect(await w.b.acquireOrRenew('scheduler', 'b', 3000)).toMatchObject({ held: false, holder: 'a' }); // gate is b's, fence still a's
    expect(w.gate.row?.holder).toBe('b');
    expect(await w.a.acquireOrRenew('scheduler', 'a', 3000)).toMatchObject({ held: false, holder: 'b' });
    expect(w.fence.row?.expiresAt).toBe(0); // released, not left to expire
    expect(await w.b.acquireOrRenew('scheduler', 'b', 3000)).toMatchObject({ held: true, holder: 'b', fencingToken: 2n });
  });

  it('release gives up both leases', async () => {
    const w = world();
    await w.a.acquireOrRenew('scheduler', 'a', 3000);
    await w.a.release('scheduler', 'a');
    expect(await w.b.acquireOrRenew('scheduler', 'b', 3000)).toMatchObject({ held: true, holder: 'b', fencingToken: 2n });
  });

  it('a gate that fails propagates (the elector counts a failed renewal) and leaves the fence alone', async () => {
    const w = world();
    await w.a.acquireOrRenew('scheduler', 'a', 3000);
    w.gate.failing = true;
    await expect(w.a.acquireOrRenew('scheduler', 'a', 3000)).rejects.toThrow('database unreachable');
    expect(w.fence.row).toMatchObject({ holder: 'a', token: 1n });
  });
});
