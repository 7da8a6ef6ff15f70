import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import type { ReclaimPolicy, RunningJob, WithinTeamPolicy } from './model.js';
import { runCycle } from './cycle.js';
import { checkInvariants } from './invariants.js';

const H100 = 'h100-80gb';

/** One 8-accelerator node full with `victim` (team vision), and `job` of team vision wanting it. */
function withinTeam(policy: WithinTeamPolicy, victimPriority: number, jobPriority: number, victimSubmittedLater: boolean) {
  return snapshot()
    .nodes(makeNode('n1'))
    .teams(makeTeam('vision').withinTeam(policy))
    .quotas(makeQuota('vision', H100).nominal(8))
    .running(
      makeJob('victim')
        .priority(victimPriority)
        .accelerators(8)
        .submittedAt(victimSubmittedLater ? T0 - MINUTE : T0 - 10 * MINUTE)
        .runsOn('n1'),
    )
    .pending(makeJob('llama-ft-7').priority(jobPriority).accelerators(8).submittedAt(T0 - 5 * MINUTE))
    .build();
}

describe('preemption within a team', () => {
  it.each([
    { name: 'LowerPriority preempts a lower-priority job', policy: 'LowerPriority', vp: 10, jp: 100, later: false, want: ['victim'] },
    { name: 'LowerPriority spares an equal-priority job', policy: 'LowerPriority', vp: 10, jp: 10, later: true, want: [] },
    { name: 'LowerOrNewerEqualPriority preempts an equal-priority job submitted later', policy: 'LowerOrNewerEqualPriority', vp: 10, jp: 10, later: true, want: ['victim'] },
    { name: 'LowerOrNewerEqualPriority spares an equal-priority job submitted earlier', policy: 'LowerOrNewerEqualPriority', vp: 10, jp: 10, later: false, want: [] },
    { name: 'Never preempts nothing', policy: 'Never', vp: 0, jp: 100, later: false, want: [] },
    { name: 'a higher-priority job is never preempted', policy: 'LowerOrNewerEqualPriority', vp: 100, jp: 10, later: true, want: [] },
  ] as { name: string; policy: WithinTeamPolicy; vp: number; jp: number; later: boolean; want: string[] }[])('$name', ({ policy, vp, jp, later, want }) => {
    const r = runCycle(withinTeam(policy, vp, jp, later));
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(want);
    expect(r.admissions.map((a) => a.preempts)).toEqual(want.length > 0 ? [want] : []);
  });

  it('explains the preemption with both priorities, and the preemptor is admitted in the same cycle', () => {
    const r = runCycle(withinTeam('LowerPriority', 10, 100, false));
    expect(r.preemptions).toEqual([
      {
        victimJobId: 'victim',
        victimTeam: 'vision',
        preemptorJobId: 'llama-ft-7',
        kind: 'WithinTeam',
        lostAcceleratorSeconds: 4800,
        lostSince: T0 - 10 * MINUTE,
        gracePeriodSeconds: 0,
        message: 'preempted by vision/llama-ft-7 (priority 100 > 10) to free 8 h100-80gb within team vision',
      },
    ]);
    expect(r.admissions[0]).toMatchObject({ jobId: 'llama-ft-7', placement: [{ node: 'n1', accelerators: 8 }] });
  });

  it('never preempts with options.preemption off', () => {
    const s = withinTeam('LowerPriority', 10, 100, false);
    expect(runCycle({ ...s, options: { ...s.options, preemption: false } }).preemptions).toEqual([]);
  });

  it.each([
    { name: 'a non-preemptible job is never a victim', nonPreemptible: true, admittedAgo: 60 * MINUTE, minRuntime: 0 },
    { name: 'a job admitted less than minRuntimeBeforePreemptionSeconds ago is never a victim', nonPreemptible: false, admittedAgo: 5 * MINUTE, minRuntime: 600 },
  ])('$name', ({ nonPreemptible, admittedAgo, minRuntime }) => {
    let victim = makeJob('victim').priority(0).accelerators(8).runsOn('n1').admittedAt(T0 - admittedAgo);
    if (nonPreemptible) victim = victim.nonPreemptible();
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'))
        .quotas(makeQuota('vision', H100).nominal(8))
        .running(victim)
        .pending(makeJob('j').priority(100).accelerators(8))
        .options({ minRuntimeBeforePreemptionSeconds: minRuntime })
        .build(),
    );
    expect(r.preemptions).toEqual([]);
    expect(r.admissions).toEqual([]);
  });

  it('a job admitted just long enough ago can be preempted', () => {
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'))
        .quotas(makeQuota('vision', H100).nominal(8))
        .running(makeJob('victim').priority(0).accelerators(8).runsOn('n1').admittedAt(T0 - 10 * MINUTE))
        .pending(makeJob('j').priority(100).accelerators(8))
        .options({ minRuntimeBeforePreemptionSeconds: 600 })
        .build(),
    );
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(['victim']);
  });
});

describe('victim choice', () => {
  it('picks the cheapest sufficient set: the lowest priority that frees a whole node, dropping victims not needed', () => {
    // n1: 4 used by low-1 (priority 1) and 4 by low-3 (priority 3); n2: 8 used by low-2 (priority 2).
    // The 8-accelerator job first adds low-1 (not enough), then low-2 (n2 is free): low-1 is dropped.
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'), makeNode('n2'))
        .quotas(makeQuota('vision', H100).nominal(16))
        .running(
          makeJob('low-1').priority(1).accelerators(4).runsOn('n1'),
          makeJob('low-3').priority(3).accelerators(4).runsOn('n1'),
          makeJob('low-2').priority(2).accelerators(8).runsOn('n2'),
        )
        .pending(makeJob('big').priority(10).accelerators(8))
        .build(),
    );
    expect(r.admissions[0]).toMatchObject({ jobId: 'big', preempts: ['low-2'], placement: [{ node: 'n2' }] });
  });

  it('among equal priorities the most recently admitted goes first, then the smaller one', () => {
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
        .quotas(makeQuota('vision', H100).nominal(24))
        .running(
          makeJob('older').accelerators(8).runsOn('n1').admittedAt(T0 - 50 * MINUTE),
          makeJob('newer').accelerators(8).runsOn('n2').admittedAt(T0 - 5 * MINUTE),
          makeJob('oldest').accelerators(8).runsOn('n3').admittedAt(T0 - 90 * MINUTE),
        )
        .pending(makeJob('j').priority(5).accelerators(8))
        .build(),
    );
    expect(r.admissions[0]!.preempts).toEqual(['newer']);
  });

  it('evicts whole gangs only and frees exactly what the preemptor needs (quota AND placement)', () => {
    const r = runCycle(
      snapshot()
        .nodes(...makeNodes('n', 4))
        .quotas(makeQuota('vision', H100).nominal(32))
        .running(
          makeJob('gang').priority(0).replicas(2).accelerators(8).runsOn('n-0', 'n-1'),
          makeJob('single').priority(1).accelerators(8).runsOn('n-2'),
          makeJob('other').priority(1).accelerators(8).runsOn('n-3'),
        )
        .pending(makeJob('j').priority(9).replicas(2).accelerators(8).topology('none'))
        .build(),
    );
    expect(r.admissions[0]!.preempts).toEqual(['gang']);
    expect(r.preemptions).toHaveLength(1);
  });
});

describe('reclaim within a cohort', () => {
  /** research cohort: vision (nominal 16) lends to nlp (nominal 8), which runs nlp-own (priority 500) and borrows 8 with `borrow`. */
  function cohort(reclaim: ReclaimPolicy, opts: { borrowPriority?: number; jobAccelerators?: number; visionUsed?: number } = {}) {
    const running = [
      makeJob('borrow').team('nlp').priority(opts.borrowPriority ?? 0).accelerators(8).runsOn('n2'),
      makeJob('nlp-own').team('nlp').priority(500).accelerators(8).runsOn('n3'),
    ];
    if ((opts.visionUsed ?? 0) > 0) running.push(makeJob('vision-own').team('vision').accelerators(opts.visionUsed!).runsOn('n1'));
    return snapshot()
      .nodes(makeNode('n1').accelerators(8), makeNode('n2'), makeNode('n3'))
      .teams(makeTeam('vision').cohort('research').reclaim(reclaim), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
      .running(...running)
      .pending(makeJob('llama-ft-7').team('vision').priority(100).accelerators(opts.jobAccelerators ?? 8).replicas(2))
      .build();
  }

  it('reclaims capacity lent to a borrowing team, and says so', () => {
    const r = runCycle(cohort('LowerPriority', { borrowPriority: 10, jobAccelerators: 8 }));
    expect(r.preemptions).toEqual([
      {
        victimJobId: 'borrow',
        victimTeam: 'nlp',
        preemptorJobId: 'llama-ft-7',
        kind: 'ReclaimWithinCohort',
        lostAcceleratorSeconds: 4800,
        lostSince: T0 - 10 * MINUTE,
        gracePeriodSeconds: 0,
        message: 'preempted by a job of team vision (priority 100 > 10) to reclaim 8 h100-80gb lent to team nlp',
      },
    ]);
    expect(r.admissions[0]).toMatchObject({ jobId: 'llama-ft-7', borrowed: 0, preempts: ['borrow'] });
  });

  it('never touches the borrower job that runs inside its nominal once the team stops borrowing', () => {
    const r = runCycle(cohort('Any'));
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(['borrow']);
  });

  it.each([
    { name: 'LowerPriority spares a higher-priority borrower', reclaim: 'LowerPriority', borrowPriority: 1000, want: [] },
    { name: 'Any reclaims whatever the priority (cheapest first: nlp-own, priority 500 < 1000)', reclaim: 'Any', borrowPriority: 1000, want: ['nlp-own'] },
    { name: 'Never reclaims nothing', reclaim: 'Never', borrowPriority: 0, want: [] },
  ] as { name: string; reclaim: ReclaimPolicy; borrowPriority: number; want: string[] }[])('$name', ({ reclaim, borrowPriority, want }) => {
    expect(runCycle(cohort(reclaim, { borrowPriority })).preemptions.map((p) => p.victimJobId)).toEqual(want);
  });

  it('no reclaim when the preemptor would itself borrow: nobody is preempted to let another team borrow', () => {
    // vision already uses 8 of 16 on n1; the job wants 2 × 8 more = 24 > 16 nominal.
    const r = runCycle(cohort('Any', { visionUsed: 8 }));
    expect(r.preemptions).toEqual([]);
    expect(r.admissions).toEqual([]);
  });
});

describe('no preemption cycles', () => {
  it('a victim requeued as pending can never preempt its preemptor back', () => {
    const first = withinTeam('LowerOrNewerEqualPriority', 10, 10, true);
    const r1 = runCycle(first);
    expect(r1.preemptions.map((p) => [p.victimJobId, p.preemptorJobId])).toEqual([['victim', 'llama-ft-7']]);
    // Next cycle: the preemptor runs, the victim is pending again with its original submittedAt.
    const victim = first.running[0]!;
    const preemptor = first.pending[0]!;
    const running: RunningJob = {
      ...preemptor,
      flavor: H100,
      placement: r1.admissions[0]!.placement,
      admittedAt: first.now,
      preempted: r1.admissions[0]!.preempts,
    };
    const { flavor: _f, placement: _p, admittedAt: _a, ...pendingVictim } = victim;
    const r2 = runCycle({ ...first, now: first.now + MINUTE, running: [running], pending: [pendingVictim] });
    // Same priority, but the victim was submitted later: LowerOrNewerEqualPriority does not allow it
    // to strike back (and `preempted` would forbid it anyway).
    expect(r2.preemptions).toEqual([]);
    expect(r2.admissions).toEqual([]);
    expect(r2.pending[0]!.jobId).toBe('victim');
  });

  it('even when usage changed so that reclaim rules would allow it, RunningJob.preempted forbids striking back', () => {
    // nlp's `p` once reclaimed from vision's `v`; now nlp borrows (a later job) and v wants back in.
    const s = snapshot()
      .nodes(makeNode('n1').accelerators(4))
      .teams(makeTeam('vision').cohort('c').reclaim('Any'), makeTeam('nlp').cohort('c').reclaim('Any'))
      .quotas(makeQuota('vision', H100).nominal(2), makeQuota('nlp', H100).nominal(2))
      .running(makeJob('p').team('nlp').accelerators(2).runsOn('n1'), makeJob('later').team('nlp').accelerators(2).runsOn('n1').nonPreemptible())
      .pending(makeJob('v').team('vision').accelerators(2))
      .build();
    expect(runCycle(s).preemptions.map((p) => p.victimJobId)).toEqual(['p']);
    const withHistory = { ...s, running: s.running.map((r) => (r.id === 'p' ? { ...r, preempted: ['v'] } : r)) };
    expect(runCycle(withHistory).preemptions).toEqual([]);
  });
});

describe('checkpoint-aware preemption', () => {
  /** Two equal 8-GPU victims on two nodes; a priority-100 job needs one node. */
  function twoVictims(a: (b: ReturnType<typeof makeJob>) => ReturnType<typeof makeJob>, b: (b: ReturnType<typeof makeJob>) => ReturnType<typeof makeJob>) {
    return snapshot()
      .nodes(makeNode('n1'), makeNode('n2'))
      .teams(makeTeam('vision').withinTeam('LowerPriority'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .running(a(makeJob('a').priority(0).accelerators(8).runsOn('n1')), b(makeJob('b').priority(0).accelerators(8).runsOn('n2')))
      .pending(makeJob('urgent').priority(100).accelerators(8))
      .build();
  }

  it.each([
    {
      name: 'without checkpoints, the most recently started loses least',
      a: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 60 * MINUTE),
      b: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 10 * MINUTE),
      want: 'b',
      lost: 8 * 600,
    },
    {
      name: 'an older job that checkpointed a minute ago loses less than a younger one that never did',
      a: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 60 * MINUTE).checkpoint(1800, 30).checkpointedAt(T0 - MINUTE),
      b: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 10 * MINUTE),
      want: 'a',
      lost: 8 * 60,
    },
    {
      name: 'without a report, the last checkpoint is the last multiple of the interval since admission',
      // a: admitted 65 min ago, every 30 min → checkpointed 5 min ago; b: admitted 10 min ago, no checkpoints.
      a: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 65 * MINUTE).checkpoint(1800, 30),
      b: (j: ReturnType<typeof makeJob>) => j.admittedAt(T0 - 10 * MINUTE),
      want: 'a',
      lost: 8 * 300,
    },
  ])('$name', ({ a, b, want, lost }) => {
    const r = runCycle(twoVictims(a, b));
    expect(r.preemptions.map((p) => [p.victimJobId, p.lostAcceleratorSeconds])).toEqual([[want, lost]]);
  });

  it('gives a checkpointing victim its grace period and says what it loses', () => {
    const r = runCycle(
      twoVictims(
        (j) => j.admittedAt(T0 - 60 * MINUTE).checkpoint(1800, 45).checkpointedAt(T0 - 30 * MINUTE),
        (j) => j.admittedAt(T0 - 90 * MINUTE),
      ),
    );
    expect(r.preemptions).toHaveLength(1);
    expect(r.preemptions[0]).toMatchObject({ victimJobId: 'a', gracePeriodSeconds: 45, lostAcceleratorSeconds: 8 * 1800, lostSince: T0 - 30 * MINUTE });
    expect(r.preemptions[0]!.message).toBe(
      `preempted by vision/urgent (priority 100 > 0) to free 8 h100-80gb within team vision; loses 4.0 accelerator-hours since its checkpoint at ${new Date(T0 - 30 * MINUTE).toISOString()}`,
    );
  });
});

describe('the cheapest victims (issue: preemption took the largest gang first)', () => {
  it('a 1 × 8 job takes the 8-GPU job of equal priority, not the 32-GPU gang that started at the same time', () => {
    // n0–n3 hold the 32-GPU gang, n4 the 8-GPU job; both admitted an hour ago, neither checkpoints.
    const r = runCycle(
      snapshot()
        .nodes(...makeNodes('n', 5))
        .quotas(makeQuota('vision', H100).nominal(40))
        .running(
          makeJob('big').priority(0).replicas(4).accelerators(8).admittedAt(T0 - 60 * MINUTE).runsOn('n-0', 'n-1', 'n-2', 'n-3'),
          makeJob('small').priority(0).accelerators(8).admittedAt(T0 - 60 * MINUTE).runsOn('n-4'),
        )
        .pending(makeJob('urgent').priority(10).accelerators(8))
        .build(),
    );
    expect(r.preemptions.map((p) => [p.victimJobId, p.lostAcceleratorSeconds])).toEqual([['small', 8 * 3600]]);
    expect(r.admissions[0]).toMatchObject({ jobId: 'urgent', placement: [{ node: 'n-4' }] });
  });

  it('a reclaim that needs 8 takes the borrower\'s newer 8-GPU job, not its older 16-GPU one, and says how much was lent', () => {
    // nlp (nominal 0) borrows 24 from vision (nominal 24): older 16 GPUs on n2+n3, newer 8 on n1.
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
        .teams(makeTeam('vision').cohort('research').reclaim('Any'), makeTeam('nlp').cohort('research'))
        .quotas(makeQuota('vision', H100).nominal(24), makeQuota('nlp', H100).nominal(0))
        .running(
          makeJob('older-16').team('nlp').replicas(2).accelerators(8).admittedAt(T0 - 120 * MINUTE).runsOn('n2', 'n3'),
          makeJob('newer-8').team('nlp').accelerators(8).admittedAt(T0 - 30 * MINUTE).runsOn('n1'),
        )
        .pending(makeJob('llama').team('vision').priority(0).accelerators(8))
        .build(),
    );
    expect(r.preemptions.map((p) => [p.victimJobId, p.message])).toEqual([
      ['newer-8', 'preempted by a job of team vision (priority 0 = 0, reclaim policy Any) to reclaim 8 h100-80gb lent to team nlp'],
    ]);
  });

  it.each([
    { name: 'never evicts a gang more than 8 × the shortfall while smaller gangs suffice, even one that just checkpointed', need: 1, want: ['one-0'] },
    { name: 'evicts a gang up to 8 × the shortfall when it loses least (short of 2: less than any two 1-GPU jobs)', need: 2, want: ['gang-16'] },
  ])('$name', ({ need, want }) => {
    // The 16-GPU gang checkpointed a minute ago (lost work 16 × 1 min); each 1-GPU job on n-2 loses 30 min or more.
    const r = runCycle(
      snapshot()
        .nodes(...makeNodes('n', 3))
        .quotas(makeQuota('vision', H100).nominal(24))
        .running(
          makeJob('gang-16').replicas(2).accelerators(8).admittedAt(T0 - 120 * MINUTE).checkpoint(3600).checkpointedAt(T0 - MINUTE).runsOn('n-0', 'n-1'),
          ...Array.from({ length: 8 }, (_, i) => makeJob(`one-${i}`).accelerators(1).admittedAt(T0 - (30 + i) * MINUTE).runsOn('n-2')),
        )
        .pending(makeJob('urgent').priority(10).accelerators(need))
        .build(),
    );
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(want);
  });

  it('among sets of gangs of a fitting size, takes the one that loses the least work in all, not the cheapest one first', () => {
    // Needs 8 on one node: n1 holds one 8-GPU job (lost 8 × 20 min = 160), n2 two 4-GPU jobs (4 × 15 + 4 × 25 = 160)
    // and n3 a 4-GPU job that lost nothing (5 min, 4 × 5 = 20) beside one of 4 × 40 = 160: n1 or n2 tie at 160 and
    // free 8, n3 costs 180. Greedy by single cheapest (n3's 20) would have led to n3.
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
        .quotas(makeQuota('vision', H100).nominal(24))
        .running(
          makeJob('n1-8').accelerators(8).admittedAt(T0 - 20 * MINUTE).runsOn('n1'),
          makeJob('n2-a').accelerators(4).admittedAt(T0 - 15 * MINUTE).runsOn('n2'),
          makeJob('n2-b').accelerators(4).admittedAt(T0 - 25 * MINUTE).runsOn('n2'),
          makeJob('n3-young').accelerators(4).admittedAt(T0 - 5 * MINUTE).runsOn('n3'),
          makeJob('n3-old').accelerators(4).admittedAt(T0 - 45 * MINUTE).runsOn('n3'),
        )
        .pending(makeJob('urgent').priority(10).accelerators(8))
        .build(),
    );
    const lost = r.preemptions.reduce((s, p) => s + (p.lostAcceleratorSeconds ?? 0), 0);
    expect(lost).toBe(8 * 20 * 60);
    expect(r.preemptions.map((p) => p.victimJobId).sort()).toEqual(['n1-8']);
  });

  it('a reclaim takes from the borrower what it borrowed and says so when the gang held more', () => {
    // nlp (nominal 8) runs 16 on n2+n3 as one gang: it borrows 8; vision needs those 8 back.
    const r = runCycle(
      snapshot()
        .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
        .teams(makeTeam('vision').cohort('research').reclaim('Any'), makeTeam('nlp').cohort('research'))
        .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
        .running(
          makeJob('vision-own').team('vision').accelerators(8).runsOn('n1').nonPreemptible(),
          makeJob('nlp-16').team('nlp').priority(50).replicas(2).accelerators(8).runsOn('n2', 'n3'),
        )
        .pending(makeJob('llama').team('vision').priority(0).accelerators(8))
        .build(),
    );
    expect(r.preemptions.map((p) => p.message)).toEqual([
      'preempted by a job of team vision (priority 0 < 50, reclaim policy Any) to reclaim 8 h100-80gb lent to team nlp (of the 16 it held)',
    ]);
  });

  it('says "this job was submitted later" of an equal-priority victim, which it was', () => {
    const r = runCycle(withinTeam('LowerOrNewerEqualPriority', 10, 10, true));
    expect(r.preemptions.map((p) => p.message)).toEqual([
      'preempted by vision/llama-ft-7 (equal priority 10, and this job was submitted later) to free 8 h100-80gb within team vision',
    ]);
  });
});

describe('no thrashing', () => {
  /** One full node: `victim` (priority 5) was preempted `ago` ms before it was admitted again. */
  function recentlyPreempted(ago: number, preemptorPriority: number, minRuntime = 0) {
    return snapshot()
      .nodes(makeNode('n1'))
      .teams(makeTeam('vision').withinTeam('LowerOrNewerEqualPriority'))
      .quotas(makeQuota('vision', H100).nominal(8))
      .running(makeJob('victim').priority(5).accelerators(8).submittedAt(T0 - 60 * MINUTE).admittedAt(T0 - 5 * MINUTE).preemptedAt(T0 - ago).runsOn('n1'))
      .pending(makeJob('j').priority(preemptorPriority).accelerators(8).submittedAt(T0 - 90 * MINUTE))
      .options({ minRuntimeBeforePreemptionSeconds: minRuntime })
      .build();
  }

  it.each([
    { name: 'a job preempted 10 min ago is not a victim again for equal priority', ago: 10 * MINUTE, priority: 5, minRuntime: 0, want: [] },
    { name: 'it is for a higher priority', ago: 10 * MINUTE, priority: 6, minRuntime: 0, want: ['victim'] },
    { name: 'after 15 min it is again', ago: 16 * MINUTE, priority: 5, minRuntime: 0, want: ['victim'] },
  ])('$name', ({ ago, priority, minRuntime, want }) => {
    const r = runCycle(recentlyPreempted(ago, priority, minRuntime));
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(want);
  });
});

describe('a reclaim lists each borrower’s victims smallest first', () => {
  it('so that the borrower still borrows before each of them is taken (rule 4 holds in the order given)', () => {
    // nlp (nominal 8) uses 12: 7 on n2 that may not be preempted, and on n3 a young 4-GPU job and an old 1-GPU
    // one — it borrows 4. vision needs a whole node: n3, both victims. Listed largest first, the 4-GPU job would
    // bring nlp to its nominal before the 1-GPU job is taken.
    const s = snapshot()
      .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
      .teams(makeTeam('vision').cohort('research').reclaim('Any'), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
      .running(
        makeJob('vision-own').team('vision').accelerators(8).runsOn('n1').nonPreemptible(),
        makeJob('nlp-own').team('nlp').accelerators(7).runsOn('n2').nonPreemptible(),
        makeJob('nlp-young-4').team('nlp').accelerators(4).admittedAt(T0 - 10 * MINUTE).runsOn('n3'),
        makeJob('nlp-old-1').team('nlp').accelerators(1).admittedAt(T0 - 100 * MINUTE).runsOn('n3'),
      )
      .pending(makeJob('vision-back').team('vision').accelerators(8))
      .build();
    const r = runCycle(s);
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(['nlp-old-1', 'nlp-young-4']);
    expect(checkInvariants(s, r)).toEqual([]);
  });
});
