import { describe, expect, it } from '@jest/globals';
import { HOUR, MINUTE, T0, makeFlavor, makeJob, makeNode, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import { checkBudgetedCycle, planBudgetStops, runBudgetedCycle, type BudgetStop, type BudgetStopRule, type BudgetedCycleResult, type BudgetedSnapshot } from './budget-block.js';
import { runCycle } from './cycle.js';
import { checkSafetyInvariants } from './invariants.js';
import type { Snapshot } from './model.js';

const H100 = 'h100-80gb';
const NEXT_MONTH = Date.UTC(2026, 11, 1);

function world(blocked: boolean) {
  const s = snapshot()
    .nodes(...makeNodes('n', 4))
    .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'))
    .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(16))
    .running(makeJob('r-v').team('vision').accelerators(8).runsOn('n-0').runtime(3600))
    .pending(
      makeJob('v-1').team('vision').accelerators(8).priority(10).submittedAt(T0 - 3 * MINUTE),
      makeJob('n-1').team('nlp').accelerators(8).submittedAt(T0 - 2 * MINUTE),
      makeJob('v-2').team('vision').accelerators(4).submittedAt(T0 - MINUTE),
    )
    .build();
  return blocked ? { ...s, budgetBlocks: [{ team: 'vision', until: NEXT_MONTH, message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11' }] } : s;
}

describe('budget blocks (Snapshot.budgetBlocks)', () => {
  it('leave the team\'s pending jobs pending with BUDGET_EXHAUSTED until the next period; other teams are admitted; running jobs stay', () => {
    const r = runCycle(world(true));
    expect(r.admissions.map((a) => a.jobId)).toEqual(['n-1']);
    expect(r.preemptions).toEqual([]);
    expect(r.pending).toEqual([
      { jobId: 'v-1', code: 'BUDGET_EXHAUSTED', message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11', position: 1, estimatedStartAt: NEXT_MONTH },
      { jobId: 'v-2', code: 'BUDGET_EXHAUSTED', message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11', position: 2, estimatedStartAt: NEXT_MONTH },
    ]);
    expect(r.reservations).toEqual([]);
  });

  it('change nothing when absent or for other teams', () => {
    const free = runCycle(world(false));
    expect(free.admissions.map((a) => a.jobId).sort()).toEqual(['n-1', 'v-1', 'v-2']);
    expect(runCycle({ ...world(false), budgetBlocks: [{ team: 'audio', until: NEXT_MONTH, message: 'x' }] })).toEqual(free);
  });
});

describe('stop budgets (BudgetedSnapshot.budgetStops, runBudgetedCycle)', () => {
  const DAY_END = T0 + 12 * HOUR; // T0 is noon UTC
  const FIGURES = 'team vision used 2.5 of 0.5 accelerator-hours of its day budget (2026-01-01)';
  const dayStop: BudgetStopRule = { team: 'vision', period: 'day', unit: 'accelerator-hours', until: DAY_END, message: FIGURES };

  /** vision runs 12 of the 16 H100s (a checkpointing job and a protected one), nlp 4; nlp waits for 8, vision for 4. */
  function fleet(): Snapshot {
    return snapshot()
      .flavors(makeFlavor(H100).cost(4), makeFlavor('a10').cost(0))
      .nodes(...makeNodes('n', 2), makeNode('a-0').flavor('a10'))
      .teams(makeTeam('vision'), makeTeam('nlp'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('vision', 'a10').nominal(8), makeQuota('nlp', H100).nominal(16))
      .running(
        makeJob('r-v1').team('vision').accelerators(8).runsOn('n-0').checkpoint(600, 120).checkpointedAt(T0 - 3 * MINUTE),
        makeJob('r-v2').team('vision').accelerators(4).priority(100).nonPreemptible().runsOn('n-1'),
        makeJob('r-n').team('nlp').accelerators(4).runsOn('n-1'),
      )
      .pending(makeJob('n-1').team('nlp').accelerators(8).submittedAt(T0 - 2 * MINUTE), makeJob('v-1').team('vision').accelerators(4).submittedAt(T0 - MINUTE))
      .build();
  }
  const withRules = (s: Snapshot, ...budgetStops: BudgetStopRule[]): BudgetedSnapshot => ({ ...s, budgetStops });

  it("stop every running job of the team that counts — with its grace period and checkpoint — in the cycle that sees the budget used up; the team's new jobs wait", () => {
    const r = runBudgetedCycle(withRules(fleet(), dayStop));
    expect(r.budgetStops).toEqual([
      {
        jobId: 'r-v1',
        team: 'vision',
        flavor: H100,
        accelerators: 8,
        period: 'day',
        until: DAY_END,
        lostAcceleratorSeconds: 8 * 180,
        lostSince: T0 - 3 * MINUTE,
        gracePeriodSeconds: 120,
        message: `stopped: ${FIGURES}; requeued until the next period, from 2026-01-02T00:00:00.000Z; resumes from its checkpoint at 2026-01-01T11:57:00.000Z (loses 0.4 accelerator-hours)`,
      },
      {
        jobId: 'r-v2', // priority 100 and not preemptible: a team's own budget stops it all the same
        team: 'vision',
        flavor: H100,
        accelerators: 4,
        period: 'day',
        until: DAY_END,
        lostAcceleratorSeconds: 4 * 600,
        lostSince: T0 - 10 * MINUTE,
        gracePeriodSeconds: 0,
        message: `stopped: ${FIGURES}; requeued until the next period, from 2026-01-02T00:00:00.000Z; it does not checkpoint: its next run starts from scratch`,
      },
    ]);
    // What they held is free at once: nlp's job starts on n-0 without preempting anyone.
    expect(r.admissions.map((a) => [a.jobId, a.placement.map((p) => p.node)])).toEqual([['n-1', ['n-0']]]);
    expect(r.preemptions).toEqual([]);
    expect(r.pending).toEqual([
      { jobId: 'v-1', code: 'BUDGET_EXHAUSTED', message: `${FIGURES}; new and stopped jobs wait for the next period, from 2026-01-02T00:00:00.000Z`, position: 1, estimatedStartAt: DAY_END },
    ]);
  });

  it('a block budget stops nothing: running jobs go on, exactly runCycle', () => {
    const blocked: Snapshot = { ...fleet(), budgetBlocks: [{ team: 'vision', until: DAY_END, message: FIGURES }] };
    const r = runBudgetedCycle(blocked);
    expect(r).toEqual(runCycle(blocked));
    expect(r).not.toHaveProperty('budgetStops');
    expect(r.pending.map((p) => [p.jobId, p.code])).toEqual([
      ['n-1', 'INSUFFICIENT_CAPACITY'],
      ['v-1', 'BUDGET_EXHAUSTED'],
    ]);
    expect(planBudgetStops(blocked)).toEqual([]);
    expect(runBudgetedCycle(withRules(fleet()))).toEqual(runCycle(fleet()));
  });

  it('a currency budget stops only the jobs on a flavor with a price; other teams are never stopped', () => {
    const s = withRules(
      { ...fleet(), running: [...fleet().running, makeJob('r-v3').team('vision').flavors('a10').accelerators(8).runsOn('a-0').buildRunning()] },
      { ...dayStop, unit: 'currency', message: 'team vision used 40 of 10 (cost) of its day budget (2026-01-01)' },
    );
    expect(planBudgetStops(s).map((x) => x.jobId)).toEqual(['r-v1', 'r-v2']);
    expect(planBudgetStops(withRules(fleet(), { ...dayStop, team: 'audio' }))).toEqual([]);
  });

  it('a job two used-up stop budgets count is stopped by the one whose period ends last', () => {
    const MONTH_END = Date.UTC(2026, 1, 1);
    const month: BudgetStopRule = { team: 'vision', period: 'month', unit: 'accelerator-hours', until: MONTH_END, message: 'team vision used 2.5 of 2 accelerator-hours of its month budget (2026-01)' };
    const stops = planBudgetStops(withRules(fleet(), dayStop, month));
    expect(stops.map((x) => [x.jobId, x.period, x.until])).toEqual([
      ['r-v1', 'month', MONTH_END],
      ['r-v2', 'month', MONTH_END],
    ]);
    expect(runBudgetedCycle(withRules(fleet(), dayStop, month)).pending).toEqual([expect.objectContaining({ jobId: 'v-1', code: 'BUDGET_EXHAUSTED', estimatedStartAt: MONTH_END })]);
  });

  it('the guard checks the decisions against the snapshot as the stops leave it, and refuses stops no budget covers', () => {
    const s = withRules(fleet(), dayStop);
    const r = runBudgetedCycle(s);
    expect(checkBudgetedCycle(s, r)).toEqual([]);
    // Without the stops, nlp's admission on n-0 overcommits the node: the guard must see them.
    expect(checkSafetyInvariants(s, r).map((v) => v.code)).toContain('NODE_OVERCOMMITTED');
    const forged = (budgetStops: BudgetStop[]): BudgetedCycleResult => ({ ...r, budgetStops });
    const [v1] = r.budgetStops!;
    expect(checkBudgetedCycle(s, forged([...r.budgetStops!, { ...v1!, jobId: 'r-n', team: 'nlp' }])).map((v) => v.code)).toEqual(['BUDGET_STOP_UNCOVERED']);
    expect(checkBudgetedCycle(s, forged([...r.budgetStops!, { ...v1!, jobId: 'ghost' }])).map((v) => v.code)).toEqual(['UNKNOWN_JOB']);
    expect(checkBudgetedCycle(s, forged([...r.budgetStops!, v1!])).map((v) => v.code)).toEqual(['DUPLICATE_DECISION']);
    // A stopped job cannot also be preempted for an admission of the same cycle.
    const alsoPreempted: BudgetedCycleResult = {
      ...r,
      admissions: r.admissions.map((a) => ({ ...a, preempts: ['r-v1'] })),
      preemptions: [{ victimJobId: 'r-v1', victimTeam: 'vision', preemptorJobId: 'n-1', kind: 'ReclaimWithinCohort', message: 'x' }],
    };
    expect(checkBudgetedCycle(s, alsoPreempted)).not.toEqual([]);
  });
});
