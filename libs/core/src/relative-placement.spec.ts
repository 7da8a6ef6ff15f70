import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { HOUR, T0, makeFlavor, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { CycleState } from './cycle-state.js';
import { buildMarket } from './flavor-market.js';
import { runtimeOn } from './flavor-selection.js';
import { checkInvariants } from './invariants.js';
import type { Snapshot } from './model.js';

const iso = (hours: number): string => new Date(T0 + hours * HOUR).toISOString();
const V100 = 'v100';
const K80 = 'k80';
const flavors = [makeFlavor(V100).speed(1), makeFlavor(K80).speed(0.25)];

/** One 8-GPU node of each type, team vision may use both. */
function world() {
  return snapshot()
    .flavors(...flavors)
    .nodes(makeNode('v-0').flavor(V100), makeNode('k-0').flavor(K80))
    .quotas(makeQuota('vision', V100).nominal(16), makeQuota('vision', K80).nominal(8));
}

/** ResNet-like: 10× faster on a V100. Recommendation-like: 1.25× faster. Both 8 GPUs, 1 h on a V100. */
const resnet = (id: string) => makeJob(id).flavors(V100, K80).selection('fastest').speeds({ [V100]: 10, [K80]: 1 }).accelerators(8).runtime(3600);
const recsys = (id: string) => makeJob(id).flavors(V100, K80).selection('fastest').speeds({ [V100]: 1.25, [K80]: 1 }).accelerators(8).runtime(3600);

/**
 * A recsys running on the one V100 node for `hours`, checkpointing (so it may move, and bids as a waiting job does):
 * it gains little there, so the V100 stays a resnet's best value.
 */
const recsysOnV100 = (hours: number) =>
  makeJob('busy').flavors(V100, K80).selection('fastest').speeds({ [V100]: 1.25, [K80]: 1 }).accelerators(8).checkpoint(1800).runsOn('v-0').admittedAt(T0).runtime(hours * 3600);

describe('relative-speed placement', () => {
  it.each([
    { name: 'relative-speed: the fast flavor goes to the job with the larger advantage there', placement: 'relative-speed' as const, want: [['a-recsys', K80], ['b-resnet', V100]] },
    { name: 'fastest-free: the first job in order takes the fast flavor', placement: 'fastest-free' as const, want: [['a-recsys', V100], ['b-resnet', K80]] },
  ])('$name', ({ placement, want }) => {
    const s = world()
      .pending(recsys('a-recsys').submittedAt(T0 - 2 * HOUR), resnet('b-resnet').submittedAt(T0 - HOUR))
      .options({ flavorPlacement: placement })
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.flavor])).toEqual(want);
    expect(checkInvariants(s, r)).toEqual([]);
    if (placement === 'relative-speed') {
      expect(r.admissions[0]!.reason).toBe('on k80 at 80% of its best speed: where its relative advantage is largest at this cycle\'s prices (k80 0.00, v100 0.20)');
    }
  });

  it('prices: zero when no flavor is oversubscribed, the fast flavor dearer when it is', () => {
    const calm = new CycleState(world().pending(resnet('r')).build());
    expect([buildMarket(calm).price(V100), buildMarket(calm).price(K80)]).toEqual([0, 0]);
    const busy = new CycleState(world().pending(resnet('r1'), resnet('r2'), recsys('c1')).build());
    const m = buildMarket(busy);
    expect(m.price(V100)).toBeGreaterThan(m.price(K80));
    expect(m.contended).toBe(true);
  });

  it('a job waits for its fast flavor when that finishes sooner than starting now on the slow one, and says so', () => {
    // The V100 frees in 1 h: 1 h + 1 h there beats 10 h on the idle K80.
    const s = world()
      .running(makeJob('busy').flavors(V100).accelerators(8).runsOn('v-0').admittedAt(T0).runtime(3600))
      .pending(resnet('r'))
      .build();
    const r = runCycle(s);
    expect(r.admissions).toEqual([]);
    const p = r.pending[0]!;
    expect(p.code).toBe('INSUFFICIENT_CAPACITY');
    expect(p.message).toContain(`on k80: fits now, but would finish at ${iso(10)}; waits for v100, expected to finish by ${iso(2)}`);
  });

  it('a job takes the slow flavor when waiting for the fast one would finish later', () => {
    // The V100 frees in 20 h: 10 h on the K80 now is sooner.
    const s = world().running(recsysOnV100(20)).pending(resnet('r')).build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.flavor])).toEqual([['r', K80]]);
    expect(r.admissions[0]!.reason).toBe(`on k80: expected to finish at ${iso(10)}, before ${iso(21)} waiting for v100`);
  });

  it('running jobs bid too: with the fast flavor held by one that gains more there, the job is placed on the slow one at once', () => {
    // Another resnet holds the V100 for 20 h; the waiting recsys gains little there (1.25×): its best value is the K80.
    // The old prices counted only pending demand: no flavor was dear, and the recsys chose by its own finish
    // (the K80: 1.25 h against 21 h), the rule of the next test; here it is its home, and the reason says why.
    const s = world()
      .running(makeJob('busy').flavors(V100, K80).selection('fastest').speeds({ [V100]: 10, [K80]: 1 }).accelerators(8).checkpoint(1800).runsOn('v-0').admittedAt(T0).runtime(20 * 3600))
      .pending(recsys('c'))
      .build();
    const m = buildMarket(new CycleState(s));
    expect(m.price(V100)).toBeCloseTo(0.2, 9);
    expect(m.price(K80)).toBe(0);
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.flavor])).toEqual([['c', K80]]);
    expect(r.admissions[0]!.reason).toBe("on k80 at 80% of its best speed: where its relative advantage is largest at this cycle's prices (k80 0.00, v100 0.20)");
  });

  it('counts the jobs ahead waiting for the same flavor', () => {
    // Both V100 nodes busy for `hours`; three resnets (1 h on a V100, 10 h on the one K80): r1 and r2 would
    // start on them at `hours`, r3 an hour later behind them. Only the jobs' own finishes count here (weight 0:
    // the delay their slower runs cause the others is the next test's).
    const at = (hours: number): Snapshot =>
      snapshot()
        .flavors(...flavors)
        .nodes(makeNode('v-0').flavor(V100), makeNode('v-1').flavor(V100), makeNode('k-0').flavor(K80))
        .quotas(makeQuota('vision', V100).nominal(40), makeQuota('vision', K80).nominal(8))
        .running(
          makeJob('busy-0').flavors(V100).accelerators(8).runsOn('v-0').admittedAt(T0).runtime(hours * 3600),
          makeJob('busy-1').flavors(V100).accelerators(8).runsOn('v-1').admittedAt(T0).runtime(hours * 3600),
        )
        .pending(resnet('r1').submittedAt(T0 - 3), resnet('r2').submittedAt(T0 - 2), resnet('r3').submittedAt(T0 - 1))
        .options({ slowerFlavorDelayWeight: 0 })
        .build();
    const placed = (hours: number): string[][] => runCycle(at(hours)).admissions.map((a) => [a.jobId, a.flavor]);
    expect(placed(7.5)).toEqual([]);
    expect(placed(8.5)).toEqual([['r3', K80]]);
    expect(placed(9.5)).toEqual([['r1', K80]]);
  });

  it('a running job that may not move (no checkpoints, or moves off) bids only for the flavor it runs on', () => {
    // The same recsys on the V100, without checkpoints: it holds the V100 whatever the prices say, so the waiting
    // resnet pays what it bids there (0.90) instead of outbidding a recsys that could go to the K80 (0.20).
    const price = (checkpointing: boolean, movesOn = true): number => {
      const busy = makeJob('busy').flavors(V100, K80).selection('fastest').speeds({ [V100]: 1.25, [K80]: 1 }).accelerators(8).runsOn('v-0').admittedAt(T0).runtime(20 * 3600);
      const w = world()
        .running(checkpointing ? busy.checkpoint(1800) : busy)
        .pending(resnet('r'))
        .options(movesOn ? {} : { moves: { maxPerCycle: 0 } });
      return buildMarket(new CycleState(w.build())).price(V100);
    };
    expect(price(true)).toBeCloseTo(0.2, 9);
    expect(price(false)).toBeCloseTo(0.9, 9);
    expect(price(true, false)).toBeCloseTo(0.9, 9);
  });

  it("a slower flavor is not taken when the job's gain is smaller than the delay its slower run causes the others waiting", () => {
    // The V100 frees in `hours`; the resnet finishes at 10 h on the idle K80, at hours + 1 waiting for the V100. Its
    // slower run holds 8 × 9 = 72 more accelerator-hours on the 8 K80s: 9 h of delay for each other job that accepts the K80.
    const at = (hours: number, others: number, weight?: number): Snapshot =>
      world()
        .running(recsysOnV100(hours))
        .pending(
          resnet('r').submittedAt(T0 - 10),
          // Others waiting behind it that could use the K80 (they accept nothing else).
          ...Array.from({ length: others }, (_, i) => makeJob(`o${i}`).flavors(K80).accelerators(8).runtime(3600).submittedAt(T0 - 5 + i)),
        )
        .options(weight === undefined ? {} : { slowerFlavorDelayWeight: weight })
        .build();
    const resnetOn = (s: Snapshot): string | undefined => runCycle(s).admissions.find((a) => a.jobId === 'r')?.flavor;
    // Alone, its own finish decides: 10 h on the K80 beats 20 + 1 h.
    expect(resnetOn(at(20, 0))).toBe(K80);
    // Weight 1: one other, 11 h earlier > 9 h of delay → K80. Three others: 11 h < 27 h → waits.
    expect(resnetOn(at(20, 1, 1))).toBe(K80);
    const r = runCycle(at(20, 3, 1));
    expect(resnetOn(at(20, 3, 1))).toBeUndefined();
    expect(r.pending.find((p) => p.jobId === 'r')!.message).toContain(
      `on k80: fits now and would finish at ${iso(10)}, before ${iso(21)} waiting for v100, but its slower run would hold 72 more accelerator-hours, ~27 h of delay for the 3 other waiting jobs in all; waits for v100`,
    );
    // The default weight (3) counts one other as 27 h: it waits.
    expect(resnetOn(at(20, 1))).toBeUndefined();
    // A longer wait for the V100 outweighs it again (40 + 1 − 10 = 31 h > 27 h); weight 0 is the rule of own finishes.
    expect(resnetOn(at(40, 3, 1))).toBe(K80);
    expect(resnetOn(at(20, 3, 0))).toBe(K80);
    // A weight that is not a finite number ≥ 0 is the default.
    expect(resnetOn(at(20, 1, Number.NaN))).toBeUndefined();
    expect(resnetOn(at(20, 1, -1))).toBeUndefined();
  });

  it('only the waiting jobs that accept the slower flavor count: V100-only jobs are not delayed by a run on the K80', () => {
    // Four V100 nodes run recsys jobs for 20 h (they gain little there: the V100 stays the resnet's home at price 0.2);
    // three V100-only jobs wait behind the resnet. Its K80 run delays none of them (it leaves them the V100 sooner):
    // its 11 h gain is weighed against no one. Counted as waiting for its flavors, they were 16 h of delay: it waited.
    const v = ['v-0', 'v-1', 'v-2', 'v-3'];
    const s = snapshot()
      .flavors(...flavors)
      .nodes(...v.map((n) => makeNode(n).flavor(V100)), makeNode('k-0').flavor(K80))
      .quotas(makeQuota('vision', V100).nominal(64), makeQuota('vision', K80).nominal(8))
      .running(
        ...v.map((n, i) =>
          makeJob(`busy-${i}`).flavors(V100, K80).selection('fastest').speeds({ [V100]: 1.25, [K80]: 1 }).accelerators(8).checkpoint(1800).runsOn(n).admittedAt(T0).runtime(20 * 3600),
        ),
      )
      .pending(resnet('r').submittedAt(T0 - 10), ...Array.from({ length: 3 }, (_, i) => makeJob(`o${i}`).flavors(V100).accelerators(8).runtime(3600).submittedAt(T0 - 5 + i)))
      .build();
    expect(buildMarket(new CycleState(s)).price(V100)).toBeCloseTo(0.2, 9);
    expect(runCycle(s).admissions.map((a) => [a.jobId, a.flavor])).toEqual([['r', K80]]);
  });

  it('only the waiting jobs that accept one of its flavors count: TPU jobs are not delayed by a run on the K80', () => {
    const TPU = 'tpu';
    const s = snapshot()
      .flavors(...flavors, makeFlavor(TPU))
      .nodes(makeNode('v-0').flavor(V100), makeNode('k-0').flavor(K80), makeNode('t-0').flavor(TPU))
      .quotas(makeQuota('vision', V100).nominal(16), makeQuota('vision', K80).nominal(8), makeQuota('vision', TPU).nominal(8))
      .running(
        recsysOnV100(20),
        makeJob('busy-tpu').flavors(TPU).accelerators(8).runsOn('t-0').admittedAt(T0).runtime(20 * 3600),
      )
      .pending(
        resnet('r').submittedAt(T0 - 10),
        ...Array.from({ length: 5 }, (_, i) => makeJob(`t${i}`).flavors(TPU).accelerators(8).runtime(3600).submittedAt(T0 - 5 + i)),
      )
      .build();
    // Five waiting jobs, none of which could use a V100 or a K80: the resnet's 11 h gain outweighs no one's delay.
    expect(runCycle(s).admissions.map((a) => [a.jobId, a.flavor])).toEqual([['r', K80]]);
  });

  it('with speeds, expectedRuntimeSeconds is the runtime on the fastest flavor, scaled on the others', () => {
    const s = world().build();
    const st = new CycleState(s);
    const job = resnet('r').build();
    expect(runtimeOn(job, V100, st.flavors)).toBe(3600);
    expect(runtimeOn(job, K80, st.flavors)).toBe(36_000);
    const plain = makeJob('p').flavors(V100, K80).runtime(3600).build();
    expect(runtimeOn(plain, K80, st.flavors)).toBe(3600);
  });

  it('is deterministic and keeps the invariants in random heterogeneous worlds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ fast: fc.integer({ min: 1, max: 20 }), gpus: fc.constantFrom(1, 2, 4, 8), hours: fc.integer({ min: 1, max: 50 }) }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.record({ flavor: fc.constantFrom(V100, K80), gpus: fc.constantFrom(1, 2, 4, 8), hours: fc.integer({ min: 0, max: 30 }) }), { maxLength: 4 }),
        (pending, running) => {
          const b = snapshot()
            .flavors(...flavors)
            .nodes(makeNode('v-0').flavor(V100), makeNode('v-1').flavor(V100), makeNode('k-0').flavor(K80), makeNode('k-1').flavor(K80))
            .quotas(makeQuota('vision', V100).nominal(16), makeQuota('vision', K80).nominal(16));
          let used = { [V100]: 0, [K80]: 0 } as Record<string, number>;
          running.forEach((r, i) => {
            const node = `${r.flavor === V100 ? 'v' : 'k'}-${used[r.flavor]! + r.gpus <= 8 ? 0 : 1}`;
            if (used[r.flavor]! + r.gpus > 16) return;
            used = { ...used, [r.flavor]: used[r.flavor]! + r.gpus };
            b.running(makeJob(`r${i}`).flavors(r.flavor).accelerators(r.gpus).runsOn(node).admittedAt(T0).runtime(r.hours * 3600));
          });
          pending.forEach((p, i) =>
            b.pending(
              makeJob(`p${i}`)
                .flavors(V100, K80)
                .selection('fastest')
                .speeds({ [V100]: p.fast, [K80]: 1 })
                .accelerators(p.gpus)
                .runtime(p.hours * 3600)
                .submittedAt(T0 - 1000 + i),
            ),
          );
          const s = b.build();
          const r = runCycle(s);
          expect(checkInvariants(s, r)).toEqual([]);
          expect(runCycle({ ...s, pending: [...s.pending].reverse(), running: [...s.running].reverse() })).toEqual(r);
          expect(r.admissions.length + r.pending.length).toBe(s.pending.length);
        },
      ),
      { numRuns: 150, seed: 12 },
    );
  });
});
