import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import type { CycleResult, PendingJob, RunningJob, Snapshot } from './model.js';
import { runCycle } from './cycle.js';

const H100 = 'h100-80gb';
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Two 8-accelerator nodes. n1 is busy until T0+30m (4) and T0+90m (4); n2 until T0+60m (8).
 * `big` (priority 10) needs one whole node: the earliest is n2 at T0+60m.
 */
function world() {
  return snapshot()
    .nodes(makeNode('n1'), makeNode('n2'))
    .quotas(makeQuota('vision', H100).nominal(64), makeQuota('nlp', H100).nominal(64))
    .running(
      makeJob('r1').team('nlp').accelerators(4).runtime(40 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n1'),
      makeJob('r2').team('nlp').accelerators(4).runtime(100 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n1'),
      makeJob('r3').team('nlp').accelerators(8).runtime(70 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n2'),
    )
    .pending(makeJob('big').priority(10).accelerators(8).submittedAt(T0 - 5 * MINUTE));
}

describe('reservations', () => {
  it('a blocked job gets the earliest start from running jobs expected ends, and holds those nodes', () => {
    const r = runCycle(world().build());
    expect(r.reservations).toEqual([{ jobId: 'big', flavor: H100, startAt: T0 + 60 * MINUTE, nodes: [{ node: 'n2', accelerators: 8 }] }]);
    expect(r.pending[0]).toMatchObject({ jobId: 'big', code: 'INSUFFICIENT_CAPACITY', estimatedStartAt: T0 + 60 * MINUTE });
    expect(r.pending[0]!.message).toContain(`reserved to start at ${iso(T0 + 60 * MINUTE)} on 1 h100-80gb node`);
  });

  it('unknown runtime counts as the default runtime; an overdue job counts as ending now', () => {
    const s = snapshot()
      .nodes(makeNode('n1'))
      .quotas(makeQuota('vision', H100).nominal(64))
      .running(makeJob('r').team('nlp').accelerators(8).runtime(null).admittedAt(T0 - 10 * MINUTE).runsOn('n1'))
      .quotas(makeQuota('nlp', H100).nominal(8))
      .pending(makeJob('big').accelerators(8))
      .options({ defaultExpectedRuntimeSeconds: 1800 })
      .build();
    expect(runCycle(s).reservations[0]!.startAt).toBe(T0 + 20 * MINUTE);
    const overdue = { ...s, running: s.running.map((j) => ({ ...j, admittedAt: T0 - 5 * 3600 * 1000 })) };
    expect(runCycle(overdue).reservations[0]!.startAt).toBe(T0);
  });

  it.each([
    {
      name: 'a job that ends before the reserved start may use the reserved node now',
      job: makeJob('short').team('nlp').accelerators(4).runtime(30 * 60),
      wantAdmitted: true,
      wantCode: undefined,
    },
    {
      name: 'a longer job may not use the reserved node (it would delay the reservation)',
      job: makeJob('long').team('nlp').accelerators(4).runtime(3 * 3600),
      wantAdmitted: false,
      wantCode: 'BLOCKED_BY_RESERVATION',
    },
    {
      name: 'a job of unknown runtime is treated as long',
      job: makeJob('unknown').team('nlp').accelerators(4).runtime(null),
      wantAdmitted: false,
      wantCode: 'BLOCKED_BY_RESERVATION',
    },
  ])('$name', ({ job, wantAdmitted, wantCode }) => {
    // Free 4 on n2 now (r3 shrinks to 4): the reservation still needs n2 at T0+60m.
    const base = world().build();
    const s: Snapshot = {
      ...base,
      running: base.running.map((j) => (j.id === 'r3' ? { ...j, acceleratorsPerReplica: 4, placement: [{ ...j.placement[0]!, accelerators: 4 }] } : j)),
    };
    const r = runCycle({ ...s, pending: [...s.pending, job.build()] });
    expect(r.reservations[0]!.jobId).toBe('big');
    expect(r.admissions.some((a) => a.jobId === job.build().id)).toBe(wantAdmitted);
    expect(r.pending.find((p) => p.jobId === job.build().id)?.code).toBe(wantCode);
    if (wantCode === 'BLOCKED_BY_RESERVATION') {
      // It gets the next reservation itself: on n1, once r1 ends.
      expect(r.pending.find((p) => p.jobId === job.build().id)!.message).toBe(
        `fits now but would delay the reservation of a job of team vision (h100-80gb from ${iso(T0 + 60 * MINUTE)}); reserved to start at ${iso(T0 + 30 * MINUTE)} on 1 h100-80gb node`,
      );
    }
  });

  it('a long job may use capacity the reservation does not hold', () => {
    const s = world().nodes(makeNode('n3').external(4)).pending(makeJob('long').team('nlp').accelerators(4).runtime(10 * 3600)).build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.placement[0]!.node])).toEqual([['long', 'n3']]);
  });

  it('the team quota at the reserved start must still cover the reservation (same team)', () => {
    // vision: nominal 16, uses 8 until T0+60m (r-own). big needs 16 → reserved at T0+60m with 0 slack.
    const s = snapshot()
      .nodes(makeNode('n1'), makeNode('n2'), makeNode('n3'))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(64))
      .running(makeJob('r-own').accelerators(8).runtime(70 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n1'))
      .running(makeJob('r-nlp').team('nlp').accelerators(8).runtime(70 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n2'))
      .pending(
        makeJob('big').priority(10).replicas(2).accelerators(8),
        makeJob('vision-long').accelerators(4).runtime(5 * 3600),
        makeJob('vision-short').accelerators(4).runtime(10 * 60),
      )
      .options({ preemption: false })
      .build();
    const r = runCycle(s);
    expect(r.reservations[0]).toMatchObject({ jobId: 'big', startAt: T0 + 60 * MINUTE });
    expect(r.admissions.map((a) => a.jobId)).toEqual(['vision-short']);
    expect(r.pending.find((p) => p.jobId === 'vision-long')!.code).toBe('BLOCKED_BY_RESERVATION');
  });

  it('only reservationDepth blocked jobs get a reservation; later ones get a position but no start', () => {
    const s = world()
      .pending(makeJob('big2').priority(9).accelerators(8), makeJob('big3').priority(8).accelerators(8))
      .options({ reservationDepth: 2 })
      .build();
    const r = runCycle(s);
    expect(r.reservations.map((x) => [x.jobId, x.startAt])).toEqual([
      ['big', T0 + 60 * MINUTE],
      ['big2', T0 + 90 * MINUTE],
    ]);
    expect(r.pending.map((p) => [p.jobId, p.position, p.estimatedStartAt])).toEqual([
      ['big', 1, T0 + 60 * MINUTE],
      ['big2', 2, T0 + 90 * MINUTE],
      ['big3', 3, null],
    ]);
  });
});

describe('strict FIFO (backfill off)', () => {
  it.each([
    {
      name: 'a later small job of any team does not start on the flavor the blocked job waits for',
      job: makeJob('small').team('nlp').accelerators(1),
      node: makeNode('n3').external(4),
      wantAdmitted: false,
    },
    {
      name: 'a later job on another flavor still starts',
      job: makeJob('tpu').team('nlp').flavors('tpu-v5e').accelerators(1),
      node: makeNode('t1').flavor('tpu-v5e'),
      wantAdmitted: true,
    },
  ])('$name', ({ job, node, wantAdmitted }) => {
    const s = world().nodes(node).quotas(makeQuota('nlp', 'tpu-v5e').nominal(8)).pending(job).options({ backfill: false }).build();
    const r = runCycle(s);
    expect(r.admissions.length > 0).toBe(wantAdmitted);
    if (!wantAdmitted) {
      expect(r.pending[1]).toMatchObject({ jobId: 'small', code: 'BLOCKED_BY_RESERVATION' });
      expect(r.pending[1]!.message).toBe('waits behind a job of team vision on h100-80gb (strict FIFO: backfill is off)');
    }
  });

  it('a job blocked by its own team quota blocks only its team', () => {
    const s = snapshot()
      .nodes(makeNode('n1'), makeNode('n2'))
      .quotas(makeQuota('vision', H100).nominal(8), makeQuota('nlp', H100).nominal(8))
      .running(makeJob('r').accelerators(4).runsOn('n1'))
      .pending(
        makeJob('v-big').priority(5).accelerators(8),
        makeJob('v-small').priority(1).accelerators(1),
        makeJob('n-small').team('nlp').priority(1).accelerators(1),
      )
      .options({ backfill: false, preemption: false })
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => a.jobId)).toEqual(['n-small']);
    expect(r.pending.map((p) => [p.jobId, p.code])).toEqual([
      ['v-big', 'QUOTA_EXCEEDED'],
      ['v-small', 'BLOCKED_BY_RESERVATION'],
    ]);
  });

  it('with backfill on, the same small job starts where it does not delay the reservation', () => {
    const s = world().nodes(makeNode('n3').external(4)).pending(makeJob('small').team('nlp').accelerators(1)).build();
    expect(runCycle(s).admissions.map((a) => a.jobId)).toEqual(['small']);
  });
});

/** Applies a cycle like the scheduler would: admissions run from now, finished jobs leave. */
function step(s: Snapshot, r: CycleResult, advanceMs: number, arrivals: PendingJob[]): Snapshot {
  const admitted = new Map(r.admissions.map((a) => [a.jobId, a]));
  const running: RunningJob[] = [
    ...s.running,
    ...s.pending
      .filter((p) => admitted.has(p.id))
      .map((p) => ({ ...p, flavor: admitted.get(p.id)!.flavor, placement: admitted.get(p.id)!.placement, admittedAt: s.now })),
  ];
  const now = s.now + advanceMs;
  const ended = (j: RunningJob): boolean => j.admittedAt + (j.expectedRuntimeSeconds ?? 3600) * 1000 <= now;
  return { ...s, now, running: running.filter((j) => !ended(j)), pending: [...s.pending.filter((p) => !admitted.has(p.id)), ...arrivals] };
}

describe('anti-starvation', () => {
  /** 4 nodes × 8, full of 1-accelerator jobs ending at staggered times; a 32-accelerator gang waits. */
  function starvationRun(reservationDepth: number): number | null {
    const running = Array.from({ length: 32 }, (_, i) =>
      makeJob(`init-${i}`)
        .team('nlp')
        .accelerators(1)
        .runtime(3600)
        .admittedAt(T0 - 3600 * 1000 + (i + 1) * 2 * MINUTE)
        .runsOn(`n${i % 4}`)
        .buildRunning(),
    );
    let s = snapshot()
      .nodes(makeNode('n0'), makeNode('n1'), makeNode('n2'), makeNode('n3'))
      .quotas(makeQuota('vision', H100).nominal(64), makeQuota('nlp', H100).nominal(64))
      .running(...running)
      .pending(makeJob('gang-64').priority(0).replicas(4).accelerators(8).submittedAt(T0 - 10 * MINUTE))
      .options({ reservationDepth, preemption: false })
      .build();
    for (let cycle = 0; cycle < 60; cycle++) {
      const r = runCycle(s);
      if (r.admissions.some((a) => a.jobId === 'gang-64')) return cycle;
      // A steady stream of small jobs of the same priority, each running 50 minutes.
      const arrivals = Array.from({ length: 3 }, (_, i) =>
        makeJob(`small-${cycle}-${i}`).team('nlp').accelerators(1).runtime(50 * 60).submittedAt(s.now).build(),
      );
      s = step(s, r, 2 * MINUTE, arrivals);
    }
    return null;
  }

  it('a 32-accelerator gang is not starved by a stream of 1-accelerator jobs: it starts when its reservation comes', () => {
    const started = starvationRun(4);
    expect(started).not.toBeNull();
    // The last initial job ends at T0+64m → 32 cycles of 2 minutes.
    expect(started!).toBeLessThanOrEqual(33);
  });

  it('without reservations the same stream starves it (what the reservation prevents)', () => {
    expect(starvationRun(0)).toBeNull();
  });
});
