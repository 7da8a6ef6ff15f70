import { describe, expect, it } from '@jest/globals';
import { HOUR, T0, makeFlavor, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { checkInvariants, checkSafetyInvariants } from './invariants.js';
import type { CycleResult, Snapshot } from './model.js';

const V100 = 'v100';
const K80 = 'k80';

/** One 8-GPU node of each type; team vision may use both. */
function world() {
  return snapshot()
    .flavors(makeFlavor(V100).speed(1), makeFlavor(K80).speed(0.25))
    .nodes(makeNode('v-0').flavor(V100), makeNode('k-0').flavor(K80))
    .quotas(makeQuota('vision', V100).nominal(8), makeQuota('vision', K80).nominal(8));
}

/** 10× faster on a V100: 50 h there in all, so 500 h on a K80. Admitted on the K80 100 h ago. */
const resnet = (id: string) =>
  makeJob(id).flavors(V100, K80).selection('fastest').speeds({ [V100]: 10, [K80]: 1 }).accelerators(8).runtime(50 * 3600).runsOn('k-0').onFlavor(K80).admittedAt(T0 - 100 * HOUR);

const moved = (r: CycleResult): string[][] => (r.moves ?? []).map((m) => [m.jobId, m.from, m.to]);

describe('moves to faster accelerators', () => {
  it('a running job that checkpoints moves to the faster flavor that freed up, with its restart cost, and says by how much', () => {
    // 400 h left on the K80; on the V100 the 400 h since its last checkpoint take 40 h, plus 5 min to restart.
    const s = world().running(resnet('r').checkpoint(1800, 60).checkpointedAt(T0 - 30 * 60 * 1000)).build();
    const r = runCycle(s);
    expect(moved(r)).toEqual([['r', K80, V100]]);
    const m = r.moves![0]!;
    expect(m.placement.map((p) => p.node)).toEqual(['v-0']);
    expect(m.lostAcceleratorSeconds).toBe(8 * 1800);
    expect(m.lostSince).toBe(T0 - 30 * 60 * 1000);
    expect(m.gracePeriodSeconds).toBe(60);
    expect(m.expectedEndBefore).toBe(T0 + 400 * HOUR);
    // (400 h + 30 min redone) ÷ 10 + 60 s grace + 300 s restart.
    expect(m.expectedEndAfter).toBe(T0 + 40 * HOUR + 3 * 60 * 1000 + 360 * 1000);
    expect(m.message).toBe('moved from k80 to v100: expected to finish 360 h earlier; redoes 4.0 accelerator-hours since its last checkpoint');
    expect(checkInvariants(s, r)).toEqual([]);
  });

  it('moves a multi-role gang with each replica in its own role’s shape', () => {
    // A learner of 4 GPUs and two actors of 2 on the K80 node; the V100 node is free.
    const gang = makeJob('rl')
      .flavors(V100, K80)
      .selection('fastest')
      .speeds({ [V100]: 10, [K80]: 1 })
      .roles(['learner', 1, 4, 8000, 65_536], ['actors', 2, 2, 2000, 16_384])
      .runtime(50 * 3600)
      .runsOn('k-0', 'k-0', 'k-0')
      .onFlavor(K80)
      .admittedAt(T0 - 100 * HOUR)
      .checkpoint(1800, 60)
      .checkpointedAt(T0 - 30 * 60 * 1000);
    const s = world().running(gang).build();
    const r = runCycle(s);
    expect(moved(r)).toEqual([['rl', K80, V100]]);
    expect(r.moves![0]!.placement.map((p) => [p.role, p.node, p.accelerators, p.cpuMillis])).toEqual([
      ['learner', 'v-0', 4, 8000],
      ['actors', 'v-0', 2, 2000],
      ['actors', 'v-0', 2, 2000],
    ]);
    expect(r.moves![0]!.lostAcceleratorSeconds).toBe(8 * 1800);
    expect(checkInvariants(s, r)).toEqual([]);
  });

  it('never moves a job that does not checkpoint, is not preemptible, or when moves are off', () => {
    expect(runCycle(world().running(resnet('r')).build()).moves).toBeUndefined();
    expect(runCycle(world().running(resnet('r').checkpoint(1800).nonPreemptible()).build()).moves).toBeUndefined();
    expect(runCycle(world().running(resnet('r').checkpoint(1800)).options({ moves: { maxPerCycle: 0 } }).build()).moves).toBeUndefined();
  });

  it('moves only when the gain clears the thresholds (hysteresis), and never to a slower flavor', () => {
    // 30 min left on the K80: 3 min + 5 min to restart on the V100 is not 30 min sooner.
    const almostDone = world().running(resnet('r').checkpoint(1800).admittedAt(T0 - 499.5 * HOUR)).build();
    expect(runCycle(almostDone).moves).toBeUndefined();
    // On the V100 already with the K80 free: no move down.
    const onFast = world()
      .running(makeJob('f').flavors(V100, K80).selection('fastest').speeds({ [V100]: 10, [K80]: 1 }).accelerators(8).runtime(50 * 3600).runsOn('v-0').onFlavor(V100).checkpoint(1800))
      .build();
    expect(runCycle(onFast).moves).toBeUndefined();
  });

  it('pending jobs come first: a V100 taken by an admission in the cycle is not free for a move', () => {
    const s = world()
      .running(resnet('r').checkpoint(1800))
      .pending(makeJob('p').flavors(V100).accelerators(8).runtime(3600))
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => [a.jobId, a.flavor])).toEqual([['p', V100]]);
    expect(r.moves).toBeUndefined();
  });

  it('bounded per cycle: the largest gains first', () => {
    const s: Snapshot = snapshot()
      .flavors(makeFlavor(V100).speed(1), makeFlavor(K80).speed(0.25))
      .nodes(makeNode('v-0').flavor(V100), makeNode('k-0').flavor(K80), makeNode('k-1').flavor(K80))
      .quotas(makeQuota('vision', V100).nominal(8), makeQuota('vision', K80).nominal(16))
      .running(
        resnet('small-gain').runtime(20 * 3600).checkpoint(1800).runsOn('k-0'),
        resnet('big-gain').checkpoint(1800).runsOn('k-1'),
      )
      .build();
    const r = runCycle(s);
    expect(moved(r)).toEqual([['big-gain', K80, V100]]);
    expect(checkInvariants(s, r)).toEqual([]);
  });

  it('the guard rejects a move that would overcommit a node or that names a job that does not checkpoint', () => {
    const s = world().running(resnet('r').checkpoint(1800), makeJob('busy').flavors(V100).accelerators(8).runsOn('v-0')).build();
    const bogus: CycleResult = {
      ...runCycle(s),
      moves: [
        {
          jobId: 'r', team: 'vision', from: K80, to: V100, replicas: 1, borrowed: 0, lostAcceleratorSeconds: 0, lostSince: 0, gracePeriodSeconds: 0,
          placement: [{ replica: 0, node: 'v-0', accelerators: 8, cpuMillis: 1000, memoryMiB: 1024 }],
          expectedEndBefore: 0, expectedEndAfter: 0, message: '',
        },
      ],
    };
    expect(checkSafetyInvariants(s, bogus).map((v) => v.code)).toContain('NODE_OVERCOMMITTED');
    const plain = world().running(resnet('r')).build();
    expect(checkInvariants(plain, { ...bogus, admissions: [], pending: [] }).map((v) => v.code)).toContain('VICTIM_NOT_PREEMPTIBLE');
  });
});
