import { describe, expect, it } from '@jest/globals';
import { makeJob, makeNode, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { QuotaBook, maxAddable } from './quota.js';
import { UNLIMITED, addAmount, fromLimit, subAmount } from './amount.js';

const H100 = 'h100-80gb';
const bigFleet = makeNodes('n', 16, (b) => b.flavor(H100).accelerators(8));

describe('amount arithmetic', () => {
  it('saturates at UNLIMITED and never goes negative', () => {
    expect(fromLimit(null)).toBe(UNLIMITED);
    expect(addAmount(UNLIMITED, 5)).toBe(UNLIMITED);
    expect(subAmount(UNLIMITED, 5)).toBe(UNLIMITED);
    expect(subAmount(3, 5)).toBe(0);
    expect(addAmount(2, 3)).toBe(5);
  });
});

describe('quota book (Kueue-like cohort model)', () => {
  const teams = [makeTeam('a').cohort('c').build(), makeTeam('b').cohort('c').build(), makeTeam('solo').build()];
  it.each([
    {
      name: 'a team alone may use up to its nominal',
      quotas: [makeQuota('solo', H100).nominal(16).borrowingLimit(100)],
      used: { solo: 10 },
      team: 'solo',
      wantMax: 6,
    },
    {
      name: 'a cohort member may borrow all idle lendable nominal of others',
      quotas: [makeQuota('a', H100).nominal(8), makeQuota('b', H100).nominal(24)],
      used: { a: 8 },
      team: 'a',
      wantMax: 24,
    },
    {
      name: 'the borrowing limit caps what it takes from the cohort',
      quotas: [makeQuota('a', H100).nominal(8).borrowingLimit(4), makeQuota('b', H100).nominal(24)],
      used: {},
      team: 'a',
      wantMax: 12,
    },
    {
      name: 'the lending limit keeps part of the lender nominal out of the pool',
      quotas: [makeQuota('a', H100).nominal(8), makeQuota('b', H100).nominal(24).lendingLimit(10)],
      used: { a: 8 },
      team: 'a',
      wantMax: 10,
    },
    {
      name: 'a lender using its own nominal shrinks what others can borrow',
      quotas: [makeQuota('a', H100).nominal(8), makeQuota('b', H100).nominal(24)],
      used: { a: 8, b: 20 },
      team: 'a',
      wantMax: 4,
    },
    {
      name: 'a team may always use its guaranteed (non-lendable) part even if the pool is drained',
      quotas: [makeQuota('a', H100).nominal(8).lendingLimit(0), makeQuota('b', H100).nominal(24)],
      used: { b: 24 },
      team: 'a',
      wantMax: 8,
    },
  ])('$name', ({ quotas, used, team, wantMax }) => {
    const book = new QuotaBook(teams, quotas.map((q) => q.build()));
    for (const [t, x] of Object.entries(used)) book.add(t, H100, x);
    expect(maxAddable(book.get(team, H100)!)).toBe(wantMax);
  });
});

describe('quota in a cycle', () => {
  it.each([
    {
      name: 'admits within nominal',
      quota: makeQuota('vision', H100).nominal(16),
      team: makeTeam('vision'),
      job: makeJob('j').team('vision').replicas(2).accelerators(8),
      wantAdmitted: true,
      wantCode: undefined,
    },
    {
      name: 'refuses above nominal without a cohort (QUOTA_EXCEEDED)',
      quota: makeQuota('vision', H100).nominal(8),
      team: makeTeam('vision'),
      job: makeJob('j').team('vision').replicas(2).accelerators(8).minReplicas(2),
      wantAdmitted: false,
      wantCode: 'UNSATISFIABLE',
    },
    {
      name: 'no Quota row for the flavor → NO_QUOTA',
      quota: makeQuota('vision', 'a100-40gb').nominal(8),
      team: makeTeam('vision'),
      job: makeJob('j').team('vision').accelerators(1),
      wantAdmitted: false,
      wantCode: 'NO_QUOTA',
    },
  ])('$name', ({ quota, team, job, wantAdmitted, wantCode }) => {
    const r = runCycle(snapshot().nodes(...bigFleet).teams(team).quotas(quota).pending(job).build());
    expect(r.admissions.length > 0).toBe(wantAdmitted);
    expect(r.pending[0]?.code).toBe(wantCode);
  });

  it('a team at its nominal gets QUOTA_EXCEEDED naming team, flavor and figures', () => {
    const r = runCycle(
      snapshot()
        .nodes(...bigFleet)
        .teams(makeTeam('vision'))
        .quotas(makeQuota('vision', H100).nominal(32))
        .running(makeJob('r').team('vision').replicas(4).accelerators(8).runsOn('n-0', 'n-1', 'n-2', 'n-3'))
        .pending(makeJob('j').team('vision').accelerators(8))
        .options({ preemption: false })
        .build(),
    );
    expect(r.pending[0]).toMatchObject({ jobId: 'j', code: 'QUOTA_EXCEEDED', position: 1 });
    expect(r.pending[0]!.message).toContain('team vision uses 32 of 32 nominal h100-80gb');
  });

  it('borrowing from the cohort is reported on the admission; an exhausted cohort is COHORT_EXHAUSTED', () => {
    const s = snapshot()
      .nodes(...bigFleet)
      .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(32), makeQuota('nlp', H100).nominal(16))
      .running(makeJob('r').team('vision').replicas(4).accelerators(8).runsOn('n-0', 'n-1', 'n-2', 'n-3'))
      .pending(makeJob('borrow').team('vision').replicas(2).accelerators(8), makeJob('more').team('vision').accelerators(8).submittedAt(Date.UTC(2026, 0, 1, 11, 59, 30)))
      .options({ preemption: false })
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.borrowed])).toEqual([['borrow', 16]]);
    expect(r.pending[0]).toMatchObject({ jobId: 'more', code: 'COHORT_EXHAUSTED' });
    expect(r.pending[0]!.message).toBe(
      'team vision uses 48 of 32 nominal h100-80gb; cohort research has 0 idle; needs 8; reserved to start at 2026-01-01T12:50:00.000Z on 1 h100-80gb node',
    );
  });

  it('a team over its borrowing limit is QUOTA_EXCEEDED even when the cohort is idle', () => {
    const r = runCycle(
      snapshot()
        .nodes(...bigFleet)
        .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'))
        .quotas(makeQuota('vision', H100).nominal(8).borrowingLimit(8), makeQuota('nlp', H100).nominal(64))
        .running(makeJob('r').team('vision').replicas(2).accelerators(8).runsOn('n-0', 'n-1'))
        .pending(makeJob('j').team('vision').accelerators(8))
        .options({ preemption: false })
        .build(),
    );
    expect(r.pending[0]).toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(r.pending[0]!.message).toContain('may borrow 8');
  });

  it('quota is per flavor: TPU quota never lets a GPU job in', () => {
    const r = runCycle(
      snapshot()
        .nodes(makeNode('g').flavor(H100), makeNode('t').flavor('tpu-v5e'))
        .quotas(makeQuota('vision', 'tpu-v5e').nominal(100))
        .pending(makeJob('j').team('vision').flavors(H100).accelerators(1))
        .build(),
    );
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]!.code).toBe('NO_QUOTA');
  });
});

describe('a job that may not be preempted never borrows (what a team lends can always be reclaimed)', () => {
  /** research: vision owns 16 and runs 8 of it; nlp owns 8, uses it all, and would borrow vision's idle 8. */
  const world = (preemptible: boolean, accelerators = 8) =>
    snapshot()
      .nodes(...bigFleet)
      .teams(makeTeam('vision').cohort('research').reclaim('Any'), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
      .running(makeJob('vision-own').team('vision').accelerators(8).runsOn('n-0'), makeJob('nlp-own').team('nlp').accelerators(8).runsOn('n-1'))
      .pending(preemptible ? makeJob('borrow').team('nlp').accelerators(accelerators) : makeJob('borrow').team('nlp').accelerators(accelerators).nonPreemptible())
      .build();

  it('a preemptible job borrows the idle nominal of another team', () => {
    expect(runCycle(world(true)).admissions).toEqual([expect.objectContaining({ jobId: 'borrow', borrowed: 8 })]);
  });

  it('one that may not be preempted waits with QUOTA_EXCEEDED saying why', () => {
    const r = runCycle(world(false));
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]).toMatchObject({ jobId: 'borrow', code: 'QUOTA_EXCEEDED' });
    expect(r.pending[0]!.message).toContain(
      "team nlp uses 8 of 8 nominal h100-80gb; a job that may not be preempted runs only within its team's nominal quota (it never borrows, so what the team lends can always be reclaimed); needs 8 more",
    );
  });

  it('one larger than its team’s nominal is UNSATISFIABLE, saying it could borrow if preemptible', () => {
    const r = runCycle(world(false, 16));
    expect(r.pending[0]).toMatchObject({ jobId: 'borrow', code: 'UNSATISFIABLE' });
    expect(r.pending[0]!.message).toBe(
      "needs 16 h100-80gb but a job that may not be preempted runs only within team nlp's nominal quota of 8 (it never borrows); submit it preemptible to borrow",
    );
  });

  it('the lender gets its nominal back: what was lent is always reclaimable', () => {
    // nlp's preemptible job borrowed vision's idle 8; now vision wants its nominal back and the fleet is full.
    const s = snapshot()
      .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
      .teams(makeTeam('vision').cohort('research').reclaim('Any'), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
      .running(
        makeJob('vision-own').team('vision').accelerators(8).runsOn('n1'),
        makeJob('nlp-own').team('nlp').accelerators(8).runsOn('n2').nonPreemptible(),
        makeJob('nlp-borrowed').team('nlp').accelerators(8).runsOn('n3'),
      )
      .pending(makeJob('vision-back').team('vision').accelerators(8))
      .build();
    const r = runCycle(s);
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(['nlp-borrowed']);
    expect(r.admissions).toEqual([expect.objectContaining({ jobId: 'vision-back', preempts: ['nlp-borrowed'] })]);
  });

  it('within its nominal it may evict lower-priority work of its own team to stay within it', () => {
    // nlp runs a preemptible job that borrows 8 beyond its nominal of 8; its urgent non-preemptible job needs 8.
    const s = snapshot()
      .nodes(...bigFleet)
      .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research').withinTeam('LowerPriority'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(8))
      .running(makeJob('nlp-a').team('nlp').priority(0).accelerators(8).runsOn('n-0'), makeJob('nlp-b').team('nlp').priority(0).accelerators(8).runsOn('n-1'))
      .pending(makeJob('urgent').team('nlp').priority(10).accelerators(8).nonPreemptible())
      .build();
    const r = runCycle(s);
    expect(r.admissions).toEqual([expect.objectContaining({ jobId: 'urgent', borrowed: 0 })]);
    expect(r.preemptions).toHaveLength(2);
  });
});
