import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import type { Snapshot } from './model.js';
import { runCycle } from './cycle.js';

const H100 = 'h100-80gb';

/** A deterministic Fisher–Yates shuffle (tests only). */
function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let t = seed;
  for (let i = out.length - 1; i > 0; i--) {
    t = (t * 1103515245 + 12345) % 2147483648;
    const j = t % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function busyWorld(): Snapshot {
  return snapshot()
    .nodes(...makeNodes('n', 6, (b, i) => b.zone(`z${i % 2}`).block(`b${i % 3}`)))
    .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research').weight(2), makeTeam('audio'))
    .quotas(
      makeQuota('vision', H100).nominal(16).borrowingLimit(8),
      makeQuota('nlp', H100).nominal(16).lendingLimit(8),
      makeQuota('audio', H100).nominal(8),
    )
    .running(
      makeJob('r-v').team('vision').replicas(2).accelerators(8).runsOn('n-0', 'n-1').runtime(1800),
      makeJob('r-n').team('nlp').accelerators(4).runsOn('n-2').priority(-1),
      makeJob('r-a').team('audio').accelerators(2).runsOn('n-2').runtime(600),
    )
    .pending(
      ...Array.from({ length: 12 }, (_, i) =>
        makeJob(`p${i}`)
          .team(['vision', 'nlp', 'audio'][i % 3]!)
          .priority(i % 4)
          .replicas(1 + (i % 3))
          .minReplicas(1)
          .accelerators([1, 2, 4, 8][i % 4]!)
          .topology((['none', 'zone', 'block'] as const)[i % 3]!)
          .runtime(i % 2 === 0 ? 900 : null)
          .submittedAt(T0 - (i + 1) * MINUTE),
      ),
    )
    .build();
}

describe('runCycle', () => {
  it('is deterministic: shuffled input lists give the same result', () => {
    const s = busyWorld();
    const want = runCycle(s);
    expect(want.admissions.length).toBeGreaterThan(0);
    expect(want.pending.length).toBeGreaterThan(0);
    for (const seed of [1, 2, 3, 4, 5]) {
      const t: Snapshot = {
        ...s,
        nodes: shuffled(s.nodes, seed),
        teams: shuffled(s.teams, seed + 1),
        quotas: shuffled(s.quotas, seed + 2),
        running: shuffled(s.running, seed + 3),
        pending: shuffled(s.pending, seed + 4),
        flavors: shuffled(s.flavors, seed + 5),
      };
      expect(runCycle(t)).toEqual(want);
    }
  });

  it('does not modify its input', () => {
    const s = busyWorld();
    const copy = structuredClone(s);
    runCycle(s);
    expect(s).toEqual(copy);
  });

  it('lists every pending job not admitted exactly once, in queue order, with 1-based positions', () => {
    const s = busyWorld();
    const r = runCycle(s);
    const ids = [...r.admissions.map((a) => a.jobId), ...r.pending.map((p) => p.jobId)].sort();
    expect(ids).toEqual(s.pending.map((p) => p.id).sort());
    expect(r.pending.map((p) => p.position)).toEqual(r.pending.map((_, i) => i + 1));
    expect(r.stats).toEqual({ considered: 12, admitted: r.admissions.length, preempted: r.preemptions.length, reserved: r.reservations.length });
  });

  it.each([
    { name: 'unknown team', job: makeJob('j').team('ghost'), want: 'invalid job: unknown team ghost' },
    { name: 'unknown flavor', job: makeJob('j').flavors('h200'), want: 'invalid job: unknown flavor h200' },
    { name: 'no flavor', job: makeJob('j').flavors(), want: 'invalid job: the job accepts no flavor' },
    { name: 'minReplicas above replicas', job: makeJob('j').replicas(2).minReplicas(3), want: 'invalid job: minReplicas must be an integer between 1 and replicas 2 (got 3)' },
    { name: 'fractional accelerators', job: makeJob('j').accelerators(1.5), want: 'invalid job: acceleratorsPerReplica must be a non-negative integer (got 1.5)' },
    { name: 'zero replicas', job: makeJob('j').replicas(0), want: 'invalid job: replicas must be a positive integer (got 0)' },
  ])('a job with $name is INVALID, never a throw', ({ job, want }) => {
    const s = snapshot().nodes(makeNode('n1')).teams(makeTeam('vision')).quotas(makeQuota('vision', H100).nominal(8)).build();
    const r = runCycle({ ...s, pending: [job.build()] });
    expect(r.pending).toEqual([{ jobId: 'j', code: 'INVALID', message: want, position: 1, estimatedStartAt: null }]);
  });

  it('a pending job whose id duplicates a running one is INVALID', () => {
    const s = snapshot()
      .nodes(makeNode('n1'))
      .quotas(makeQuota('vision', H100).nominal(8))
      .running(makeJob('same').runsOn('n1'))
      .pending(makeJob('same'))
      .build();
    expect(runCycle(s).pending[0]).toMatchObject({ code: 'INVALID', message: 'invalid job: duplicate id same' });
  });

  it('survives running jobs on unknown nodes, teams and flavors (they are counted where they can be)', () => {
    const s = snapshot()
      .nodes(makeNode('n1'))
      .quotas(makeQuota('vision', H100).nominal(8))
      .running(makeJob('ghost').team('ghost-team').runsOn('gone-node'))
      .pending(makeJob('j').accelerators(8))
      .build();
    const r = runCycle({ ...s, teams: s.teams.filter((t) => t.name !== 'ghost-team') });
    expect(r.admissions.map((a) => a.jobId)).toEqual(['j']);
  });

  it('an empty snapshot gives an empty result', () => {
    expect(runCycle(snapshot().build())).toEqual({
      admissions: [],
      preemptions: [],
      reservations: [],
      pending: [],
      stats: { considered: 0, admitted: 0, preempted: 0, reserved: 0 },
    });
  });
});

describe('robustness', () => {
  it('malformed node and placement figures count as zero instead of throwing', () => {
    const s = snapshot()
      .nodes(makeNode('bad').accelerators(Number.NaN), makeNode('neg').accelerators(-4), makeNode('ok'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .running({ ...makeJob('weird').runsOn('ok').buildRunning(), placement: [{ replica: 0, node: 'ok', accelerators: Number.NaN, cpuMillis: -1, memoryMiB: 0.5 }] })
      .pending(makeJob('j').accelerators(8))
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.placement[0]!.node])).toEqual([['j', 'ok']]);
  });

  it('lending limit in a cycle: a borrower gets only what the lender lends', () => {
    const s = snapshot()
      .nodes(...makeNodes('n', 4))
      .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'))
      .quotas(makeQuota('vision', H100).nominal(8), makeQuota('nlp', H100).nominal(24).lendingLimit(8))
      .pending(makeJob('wide').team('vision').replicas(4).minReplicas(1).accelerators(8))
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.replicas, a.borrowed])).toEqual([['wide', 2, 8]]);
  });
});
