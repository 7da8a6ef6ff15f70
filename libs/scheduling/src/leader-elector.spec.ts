import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { LeaderElector, type LeaseStore } from './leader-elector.js';
import { MemoryLeases } from './testing/memory-leases.js';

const silent = pino({ level: 'silent' });

function elector(store: LeaseStore, holder: string, clock: () => number, log: string[]): LeaderElector {
  return new LeaderElector(store, { leaseName: 'scheduler', holder, ttlMs: 3000, renewEveryMs: 1000 }, silent, {
    onElected: (l) => log.push(`${holder} elected ${l.fencingToken}`),
    onDeposed: (reason) => log.push(`${holder} deposed: ${reason}`),
  }, clock);
}

describe('LeaderElector', () => {
  it('elects one of two candidates, and the standby takes over with a larger token once the lease expires', async () => {
    let now = 0;
    const clock = (): number => now;
    const store = new MemoryLeases(clock);
    const log: string[] = [];
    const a = elector(store, 'a', clock, log);
    const b = elector(store, 'b', clock, log);
    await a.tick();
    await b.tick();
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);

    now = 2000; // a dies: it renews no more
    await b.tick();
    expect(b.isLeader).toBe(false);
    now = 3001;
    await b.tick();
    expect(b.current?.fencingToken).toBe(2n);
    expect(log).toEqual(['a elected 1', 'b elected 2']);
  });

  it('deposes itself when renewals fail for longer than the lease allows, before a standby could take over', async () => {
    let now = 0;
    const clock = (): number => now;
    const store = new MemoryLeases(clock);
    const log: string[] = [];
    const a = elector(store, 'a', clock, log);
    await a.tick();
    store.failing = true;
    now = 1500;
    await a.tick();
    expect(a.isLeader).toBe(true);
    now = 2001; // ttl 3000 - renew period 1000
    await a.tick();
    expect(a.isLeader).toBe(false);
    expect(log).toEqual(['a elected 1', 'a deposed: lease not renewed in time']);
  });

  it('steps down when another holder has the lease', async () => {
    let now = 0;
    const clock = (): number => now;
    const store = new MemoryLeases(clock);
    const log: string[] = [];
    const a = elector(store, 'a', clock, log);
    await a.tick();
    store.row = { holder: 'b', token: 7n, expiresAt: 10_000 };
    now = 100;
    await a.tick();
    expect(a.isLeader).toBe(false);
    expect(log).toEqual(['a elected 1', 'a deposed: lease taken by b']);
  });

  it('gives back a lease that an acquisition in flight took while it was stopping', async () => {
    const clock = (): number => 0;
    const memory = new MemoryLeases(clock);
    let arrive: () => void = () => undefined;
    const slow: LeaseStore = {
      acquireOrRenew: (...args) => new Promise((resolve) => (arrive = () => resolve(memory.acquireOrRenew(...args)))),
      release: (...args) => memory.release(...args),
    };
    const log: string[] = [];
    const a = elector(slow, 'a', clock, log);
    a.start(); // the first acquisition is in flight
    const stopped = a.stop();
    arrive();
    await stopped;
    expect(a.isLeader).toBe(false);
    expect(log).toEqual([]);
    expect(memory.row?.expiresAt).toBe(0); // released: a standby takes it at once
  });

  it('firstRound says whether the first election round made it the leader (and false when stopped before any)', async () => {
    let now = 0;
    const clock = (): number => now;
    const store = new MemoryLeases(clock);
    const log: string[] = [];
    const a = elector(store, 'a', clock, log);
    const b = elector(store, 'b', clock, log);
    await a.tick();
    await b.tick();
    now = 500;
    await a.tick(); // later rounds change nothing
    await expect(a.firstRound).resolves.toBe(true);
    await expect(b.firstRound).resolves.toBe(false);
    const c = elector(store, 'c', clock, log);
    await c.stop();
    await expect(c.firstRound).resolves.toBe(false);
  });

  it('refuses a renew period longer than half the lease', () => {
    expect(() => new LeaderElector(new MemoryLeases(() => 0), { leaseName: 'x', holder: 'a', ttlMs: 1000, renewEveryMs: 600 }, silent, { onElected() {}, onDeposed() {} })).toThrow(/half/);
  });
});
