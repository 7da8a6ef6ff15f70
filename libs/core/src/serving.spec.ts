import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import { checkInvariants } from './invariants.js';
import { runCycle } from './cycle.js';

const H100 = 'h100-80gb';

/**
 * Serving work (an inference server, a LeaderWorkerSet, a RayCluster) has no end of its own: unless it gives
 * a runtime, no estimate counts on getting its accelerators back. Before, it was taken to end after the
 * default runtime (an hour), so jobs waiting behind it were told they would start then, and held nodes for it.
 */
function world(serving: (j: ReturnType<typeof makeJob>) => ReturnType<typeof makeJob>) {
  return snapshot()
    .nodes(makeNode('n1'), makeNode('n2'))
    .quotas(makeQuota('vision', H100).nominal(64), makeQuota('nlp', H100).nominal(64))
    .running(
      serving(makeJob('server').team('nlp').kind('serving').accelerators(8).admittedAt(T0 - 10 * MINUTE).runsOn('n1')),
      makeJob('train').team('nlp').accelerators(8).runtime(70 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n2'),
    )
    .options({ defaultExpectedRuntimeSeconds: 1800 });
}

describe('serving work never ends in estimates', () => {
  it('a job that needs both nodes gets no start estimate and no reservation (the server never gives its node back)', () => {
    const s = world((j) => j).pending(makeJob('wide').replicas(2).accelerators(8)).build();
    const r = runCycle(s);
    expect(r.reservations).toEqual([]);
    expect(r.pending).toEqual([expect.objectContaining({ jobId: 'wide', code: 'INSUFFICIENT_CAPACITY', estimatedStartAt: null })]);
    expect(checkInvariants(s, r)).toEqual([]);
  });

  it('a job that needs one node is estimated from the training job that ends, not from the server', () => {
    const r = runCycle(world((j) => j).pending(makeJob('one').accelerators(8)).build());
    expect(r.reservations).toEqual([{ jobId: 'one', flavor: H100, startAt: T0 + 60 * MINUTE, nodes: [{ node: 'n2', accelerators: 8 }] }]);
  });

  it('a serving job that says how long it runs is estimated like any other', () => {
    const r = runCycle(world((j) => j.runtime(20 * 60)).pending(makeJob('one').accelerators(8)).build());
    expect(r.reservations).toEqual([{ jobId: 'one', flavor: H100, startAt: T0 + 10 * MINUTE, nodes: [{ node: 'n1', accelerators: 8 }] }]);
  });

  it('without a runtime, a training job still counts as ending after the default runtime', () => {
    const r = runCycle(world((j) => j.kind('training')).pending(makeJob('wide').replicas(2).accelerators(8)).build());
    expect(r.pending[0]).toMatchObject({ jobId: 'wide', estimatedStartAt: T0 + 60 * MINUTE });
  });

  it('a serving job never backfills into capacity reserved for an earlier job (it has no end before the reservation)', () => {
    // n2 frees at T0+60m and is reserved for `wide-later`; a serving job may not take it now, a 30-minute job may.
    const s = snapshot()
      .nodes(makeNode('n1'), makeNode('n2'))
      .quotas(makeQuota('vision', H100).nominal(64), makeQuota('nlp', H100).nominal(64))
      .running(makeJob('train').team('nlp').accelerators(8).runtime(70 * 60).admittedAt(T0 - 10 * MINUTE).runsOn('n1'))
      .pending(
        makeJob('wide-later').priority(10).replicas(2).accelerators(8).submittedAt(T0 - 5 * MINUTE),
        makeJob('server').kind('serving').accelerators(8).submittedAt(T0 - 4 * MINUTE),
        makeJob('short').accelerators(8).runtime(30 * 60).submittedAt(T0 - 3 * MINUTE),
      )
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => a.jobId)).toEqual(['short']);
    expect(r.pending.find((p) => p.jobId === 'server')).toMatchObject({ code: 'BLOCKED_BY_RESERVATION' });
    expect(checkInvariants(s, r)).toEqual([]);
  });
});
