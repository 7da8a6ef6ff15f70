// A leader that loses its lease between deciding a cycle and committing it must not commit: the commit's
// fencing check (the lease row's token, locked in the commit's own transaction) refuses it, the leader
// steps down and competes again, and no job is admitted twice. Each scheduler here is the production
// composition (createSchedulerProcess over the Postgres stores), in this process so that a deterministic
// hook can hold its commit; the lost connection goes through a FaultProxy.
import { describe, expect, it, jest } from '@jest/globals';
import { acquireOrRenewLease, releaseLease } from '#db';
import type { CommitCycleInput, CycleStore, SchedulerProcess } from '#scheduling';
import { executorStep, findViolations, jobStates, submitJobs } from '../integration/scheduler/fleet.js';
import { inProcessScheduler, schedulerTestWorld } from '../integration/scheduler/in-process-scheduler.js';
import { uniquePrefix, waitFor } from '../integration/scheduler/support.js';
import { FaultProxy } from '../support/fault-proxy.js';

jest.setTimeout(180_000);

const POSTGRES = { host: '127.0.0.1', port: 5432 };
const NO_VIOLATIONS = { overAllocatedNodes: [], admittedTwice: [], allocationsOfNonHolding: 0, holdingWithoutAllocation: 0 };

/** One held commit: `reached` once the cycle has decided (holding the cycle lock), then `release()` and see its `outcome`. */
class CommitHold {
  readonly reached: Promise<CommitCycleInput>;
  readonly outcome: Promise<{ committed: true } | { error: { code?: string; message: string } }>;
  reach!: (input: CommitCycleInput) => void;
  settle!: (outcome: { committed: true } | { error: { code?: string; message: string } }) => void;
  private go!: () => void;
  readonly released = new Promise<void>((resolve) => (this.go = resolve));

  constructor() {
    this.reached = new Promise((resolve) => (this.reach = resolve));
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  release(): void {
    this.go();
  }
}

/** A cycle store whose next commit that admits something can be held (the deterministic hook between decide and commit). */
class HeldStore implements CycleStore {
  private next: CommitHold | null = null;
  private held: CommitHold | null = null;

  constructor(private readonly store: CycleStore) {}

  holdNext(): CommitHold {
    this.next = new CommitHold();
    return this.next;
  }

  /** Lets a held commit (and the next one) go. */
  releaseHeld(): void {
    this.next?.release();
    this.next = null;
    this.held?.release();
  }

  withCycleLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.store.withCycleLock(fn);
  }

  openCycle(now: number): ReturnType<CycleStore['openCycle']> {
    return this.store.openCycle(now);
  }

  async commitCycle(input: CommitCycleInput): ReturnType<CycleStore['commitCycle']> {
    const hold = this.next;
    if (hold === null || input.result.admissions.length === 0) return this.store.commitCycle(input);
    this.next = null;
    this.held = hold;
    hold.reach(input);
    await hold.released;
    try {
      const outcome = await this.store.commitCycle(input);
      hold.settle({ committed: true });
      return outcome;
    } catch (error) {
      hold.settle({ error: error as { code?: string; message: string } });
      throw error;
    }
  }
}

interface Candidate {
  holder: string;
  process: SchedulerProcess;
  cycles: HeldStore;
  /** The hold on its first admitting commit (when asked for). */
  firstHold: CommitHold | null;
  /** Stops the process (giving the lease back) and closes its pools. */
  stop(): Promise<void>;
}

describe('chaos: a leader loses its lease between deciding and committing', () => {
  const prefix = uniquePrefix('fencing');
  const w = schedulerTestWorld('chaos_fencing', prefix);
  const { closers } = w;

  /** A scheduler process: its lease renewals over `leaseUrl`, its cycles (lock, read, commit) over `cycleUrl`. */
  async function candidate(holder: string, urls: { lease: string; cycle: string }, timing: { ttlMs: number; renewMs: number }, holdFirstCommit = false): Promise<Candidate> {
    let cycles: HeldStore | null = null;
    const { process, close } = inProcessScheduler({
      holder,
      redisPrefix: prefix,
      urls,
      timing,
      cycles: (store) => (cycles = new HeldStore(store)),
    });
    const held = cycles as HeldStore | null;
    if (held === null) throw new Error('the cycle store was not wrapped');
    const firstHold = holdFirstCommit ? held.holdNext() : null;
    const stop = async (): Promise<void> => {
      held.releaseHeld(); // a cycle held at its commit would keep stop() waiting
      await close();
    };
    closers.push(stop);
    await process.start();
    return { holder, process, cycles: held, firstHold, stop };
  }

  async function committers(): Promise<{ leader: string; fencing_token: string }[]> {
    const { rows } = await w.direct.pool.query<{ leader: string; fencing_token: string }>(
      `SELECT leader, fencing_token::text FROM scheduler_cycles GROUP BY leader, fencing_token ORDER BY fencing_token::bigint`,
    );
    return rows;
  }

  it('its lease connection lost: the decided commit is refused (fenced), the new leader admits the jobs once, and it leads again later', async () => {
    const leaseLink = await FaultProxy.start(POSTGRES);
    const cycleLink = await FaultProxy.start(POSTGRES);
    closers.push(() => leaseLink.close(), () => cycleLink.close());
    const first = await submitJobs(w.direct.pool, 4, { tag: 'first', perReplica: 4 });
    const a = await candidate('a', { lease: leaseLink.via(w.testDb.url), cycle: cycleLink.via(w.testDb.url) }, { ttlMs: 1500, renewMs: 300 }, true);
    const hold = a.firstHold!;

    // a leads and has decided the four admissions; its commit waits, holding the cycle lock.
    const decided = await hold.reached;
    expect(decided.result.admissions).toHaveLength(4);
    const b = await candidate('b', { lease: w.testDb.url, cycle: w.testDb.url }, { ttlMs: 1500, renewMs: 300 });

    // a's lease connection goes (and new ones are refused); its cycle's connection stays up.
    leaseLink.reset();
    const bLeads = await waitFor('b to take the lease', () => Promise.resolve(b.process.elector.current), 60_000);
    expect(bLeads.fencingToken).toBeGreaterThan(decided.fencing.token);
    expect(a.process.elector.current).toBeNull(); // a fenced itself: renewals failed for longer than the lease allows

    hold.release();
    expect(await hold.outcome).toEqual({ error: expect.objectContaining({ code: 'FENCING_TOKEN_STALE' }) });
    // Its cycle ended (rolled back, lock released): b's cycle, which waited for the lock, admits the jobs.
    await waitFor('b to admit the four jobs', async () => (await jobStates(w.direct.pool))['ADMITTED'] === first.length, 60_000);
    expect(await committers()).toEqual([{ leader: 'b', fencing_token: bLeads.fencingToken.toString() }]);
    expect(await findViolations(w.direct.pool)).toEqual(NO_VIOLATIONS);
    expect(a.process.service.status().leader).toBe(false);

    // a competes again: its link back and b gone, it takes the lease with a larger token and admits new work.
    leaseLink.heal();
    await b.stop();
    const aLeads = await waitFor('a to lead again', () => Promise.resolve(a.process.elector.current), 60_000);
    expect(aLeads.fencingToken).toBeGreaterThan(bLeads.fencingToken);
    await finishAll();
    const second = await submitJobs(w.direct.pool, 4, { tag: 'second', perReplica: 4 });
    a.process.service.trigger('test');
    await waitFor('a to admit the next four', async () => (await admitted(second)) === second.length, 60_000);
    expect((await committers()).map((c) => c.leader)).toEqual(['b', 'a']);
    expect(await findViolations(w.direct.pool)).toEqual(NO_VIOLATIONS);

    // Now its cycle's connection (the one holding the cycle lock) is lost between decide and commit:
    // nothing is committed, a stays leader, and a later cycle admits the work, once.
    await finishAll();
    const cut = a.cycles.holdNext();
    const third = await submitJobs(w.direct.pool, 4, { tag: 'third', perReplica: 4 });
    a.process.service.trigger('test');
    expect((await cut.reached).result.admissions).toHaveLength(4);
    cycleLink.reset();
    cycleLink.heal();
    cut.release();
    expect(await cut.outcome).toEqual({ error: expect.anything() });
    await waitFor('a to admit them on a new connection', async () => (await admitted(third)) === third.length, 60_000);
    expect(a.process.elector.current?.fencingToken).toBe(aLeads.fencingToken);
    expect(await findViolations(w.direct.pool)).toEqual(NO_VIOLATIONS);
    await a.stop();
  });

  it('the lease moved on while it still believed it led: the fenced commit makes it step down at once, not at its next renewal', async () => {
    await finishAll();
    const jobs = await submitJobs(w.direct.pool, 2, { tag: 'fourth', perReplica: 1 });
    // Renewals 5 minutes apart: only the refused commit can tell it before then.
    const c = await candidate('c', { lease: w.testDb.url, cycle: w.testDb.url }, { ttlMs: 600_000, renewMs: 300_000 }, true);
    const hold = c.firstHold!;
    const decided = await hold.reached;
    expect(decided.result.admissions.map((x) => x.jobId).sort()).toEqual([...jobs].sort());

    // Behind its back the lease expires and another holder takes it (what a renewal answered late or a
    // paused process lead to).
    await w.direct.pool.query(`UPDATE scheduler_leases SET expires_at = now() - interval '1 second' WHERE name = $1`, ['scheduler']);
    expect(await acquireOrRenewLease(w.direct, 'scheduler', 'usurper', 600_000)).toMatchObject({ held: true, holder: 'usurper' });
    expect(c.process.elector.isLeader).toBe(true);

    hold.release();
    expect(await hold.outcome).toEqual({ error: expect.objectContaining({ code: 'FENCING_TOKEN_STALE' }) });
    await waitFor('c to step down', () => Promise.resolve(!c.process.elector.isLeader), 60_000);
    expect(c.process.service.status().leader).toBe(false);
    expect(await admitted(jobs)).toBe(0);
    expect(await findViolations(w.direct.pool)).toEqual(NO_VIOLATIONS);
    await releaseLease(w.direct, 'scheduler', 'usurper');
    await c.stop();
  });

  /** How many of `jobs` were admitted (transitions to ADMITTED). */
  async function admitted(jobs: string[]): Promise<number> {
    const { rows } = await w.direct.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_transitions WHERE job_id = ANY($1::uuid[]) AND "to" = 'ADMITTED'`, [jobs]);
    return rows[0]!.n;
  }

  /** Runs every admitted job to completion (through the transition writer), freeing the fleet. */
  async function finishAll(): Promise<void> {
    await executorStep(w.direct.pool, 0);
    await executorStep(w.direct.pool, 0);
  }
});
