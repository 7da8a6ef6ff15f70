import { describe, expect, it } from '@jest/globals';
import { DEFAULT_OPTIONS, runBudgetedCycle, type BudgetedSnapshot, type CycleResult, type PendingJob, type Snapshot } from '#core';
import { pino } from 'pino';
import { makeJob } from '#testing';
import { CycleRunner, InvariantViolationError, NotLeaderError, type CycleReport } from './cycle-runner.js';
import type { CommitCycleInput, CycleStore, FencingSource } from './cycle-store.js';

const emptyResult: CycleResult = { admissions: [], preemptions: [], reservations: [], pending: [], stats: { considered: 0, admitted: 0, preempted: 0, reserved: 0 } };
/** One job left waiting: something to write. */
const oneWaiting: CycleResult = {
  ...emptyResult,
  pending: [{ jobId: 'j1', code: 'INSUFFICIENT_CAPACITY', message: 'no node has 8 free h100-80gb', position: 1, estimatedStartAt: null }],
  stats: { considered: 1, admitted: 0, preempted: 0, reserved: 0 },
};

/** Records the order of store calls; the lock is a promise chain, like a real mutex. */
class RecordingStore implements CycleStore {
  readonly calls: string[] = [];
  readonly commits: CommitCycleInput[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private number = 0;
  failCommit = false;
  /** The snapshot's queue: j1 waits (the results below decide about it). */
  pending: PendingJob[] = [makeJob('j1').build()];
  /** More of the snapshot (running jobs, budgets). */
  extra: Partial<BudgetedSnapshot> = {};
  withCycleLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(async () => {
      this.calls.push('lock');
      try {
        return await fn();
      } finally {
        this.calls.push('unlock');
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }
  async openCycle(now: number): Promise<{ cycle: number; snapshot: Snapshot }> {
    this.calls.push('snapshot');
    await new Promise((resolve) => setImmediate(resolve));
    const snapshot: Snapshot = { now, flavors: [], nodes: [], cohorts: [], teams: [], quotas: [], running: [], pending: this.pending, options: DEFAULT_OPTIONS, ...this.extra };
    return { cycle: ++this.number, snapshot };
  }
  commitCycle(input: CommitCycleInput): Promise<{ outbox: [] }> {
    this.calls.push('commit');
    if (this.failCommit) return Promise.reject(new Error('fencing token 3 is stale'));
    this.commits.push(input);
    return Promise.resolve({ outbox: [] });
  }
}

const leader: FencingSource = { current: () => Promise.resolve({ leaseName: 'scheduler', token: 3n, holder: 'a' }) };
const silent = pino({ level: 'silent' });

describe('CycleRunner', () => {
  it('runs snapshot → schedule → commit inside the lock, with the fencing token and a cycle number', async () => {
    const store = new RecordingStore();
    const reports: CycleReport[] = [];
    const runner = new CycleRunner(store, leader, () => oneWaiting, silent, [{ onCycle: (r) => reports.push(r) }], () => 1000);
    const report = await runner.runOnce(['tick']);
    expect(store.calls).toEqual(['lock', 'snapshot', 'commit', 'unlock']);
    expect(store.commits[0]).toMatchObject({ now: 1000, cycleNumber: 1, leader: 'a', fencing: { leaseName: 'scheduler', token: 3n } });
    expect(Object.keys(report.phasesMs).sort()).toEqual(['check', 'commit', 'lock', 'schedule', 'snapshot']);
    expect(reports).toHaveLength(1);
  });

  it('never overlaps two cycles started together (the loop and a manual cycle)', async () => {
    const store = new RecordingStore();
    const runner = new CycleRunner(store, leader, () => oneWaiting, silent);
    const [first, second] = await Promise.all([runner.runOnce(['tick']), runner.runOnce(['manual'])]);
    expect(store.calls).toEqual(['lock', 'snapshot', 'commit', 'unlock', 'lock', 'snapshot', 'commit', 'unlock']);
    expect([first.cycle, second.cycle]).toEqual([1, 2]);
  });

  it('a failing observer after the commit is logged as such: the cycle stays committed, the other observers are told, nothing says "nothing committed"', async () => {
    const store = new RecordingStore();
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    const told: number[] = [];
    const failed: string[] = [];
    const runner = new CycleRunner(
      store,
      leader,
      () => oneWaiting,
      logger,
      [
        {
          onCycle: () => {
            throw new Error('metrics exporter broke');
          },
          onCycleFailed: (phase) => failed.push(phase),
        },
        { onCycle: (r) => told.push(r.cycle) },
      ],
      () => 1000,
    );
    const report = await runner.runOnce(['tick']);
    expect(report.committed).toBe(true);
    expect(store.commits).toHaveLength(1);
    expect(told).toEqual([report.cycle]);
    expect(failed).toEqual([]);
    expect(lines.map((l) => l.msg)).toEqual(['cycle committed', 'a cycle observer failed; the cycle itself ended as reported']);
  });

  it('writes nothing for an idle cycle (no pending job, no decision)', async () => {
    const store = new RecordingStore();
    store.pending = [];
    const runner = new CycleRunner(store, leader, () => emptyResult, silent);
    const report = await runner.runOnce(['tick']);
    expect(report.committed).toBe(false);
    expect(store.calls).toEqual(['lock', 'snapshot', 'unlock']);
  });

  it('commits a cycle whose only decisions are budget stops, guarded against the snapshot they leave', async () => {
    const store = new RecordingStore();
    store.pending = [];
    store.extra = {
      running: [makeJob('r1').team('vision').accelerators(8).runsOn('n-0').buildRunning()],
      budgetStops: [{ team: 'vision', period: 'day', unit: 'accelerator-hours', until: 86_400_000, message: 'team vision used 9 of 8 accelerator-hours of its day budget (1970-01-01)' }],
    };
    const runner = new CycleRunner(store, leader, runBudgetedCycle, silent);
    const report = await runner.runOnce(['tick']);
    expect(report.committed).toBe(true);
    expect(store.commits[0]!.result.budgetStops?.map((s) => s.jobId)).toEqual(['r1']);
    // A stop no used-up budget covers is refused by the guard: nothing is committed.
    const forged = new CycleRunner(store, leader, (s) => ({ ...runBudgetedCycle(s), budgetStops: [{ ...report.result.budgetStops![0]!, jobId: 'ghost' }] }), silent);
    await expect(forged.runOnce(['tick'])).rejects.toBeInstanceOf(InvariantViolationError);
    expect(store.commits).toHaveLength(1);
  });

  it('commits nothing and says so when there is no lease', async () => {
    const store = new RecordingStore();
    const runner = new CycleRunner(store, { current: () => Promise.resolve(null) }, () => emptyResult, silent);
    await expect(runner.runOnce()).rejects.toBeInstanceOf(NotLeaderError);
    expect(store.calls).toEqual(['lock', 'unlock']);
  });

  it('reports the phase a cycle failed in', async () => {
    const store = new RecordingStore();
    store.failCommit = true;
    const failed: string[] = [];
    const runner = new CycleRunner(store, leader, () => oneWaiting, silent, [{ onCycle: () => {}, onCycleFailed: (phase) => failed.push(phase) }]);
    await expect(runner.runOnce()).rejects.toThrow(/stale/);
    expect(failed).toEqual(['commit']);
  });

  it('aborts a cycle whose decisions break a rule before anything is committed, and reports it as a check failure', async () => {
    const store = new RecordingStore();
    const failed: { phase: string; error: unknown }[] = [];
    // A broken core: admits j1 onto a node the snapshot does not have.
    const broken: CycleResult = {
      ...emptyResult,
      admissions: [{ jobId: 'j1', team: 'vision', flavor: 'h100-80gb', replicas: 1, placement: [{ replica: 0, node: 'ghost', accelerators: 1, cpuMillis: 0, memoryMiB: 0 }], borrowed: 0, preempts: [] }],
      stats: { considered: 1, admitted: 1, preempted: 0, reserved: 0 },
    };
    const runner = new CycleRunner(store, leader, () => broken, silent, [{ onCycle: () => {}, onCycleFailed: (phase, error) => failed.push({ phase, error }) }]);
    const error = await runner.runOnce().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvariantViolationError);
    expect((error as InvariantViolationError).violations.map((v) => v.code)).toContain('NODE_UNKNOWN');
    expect(store.calls).toEqual(['lock', 'snapshot', 'unlock']);
    expect(store.commits).toEqual([]);
    expect(failed.map((f) => f.phase)).toEqual(['check']);
  });
});
