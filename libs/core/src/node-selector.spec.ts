import { describe, expect, it } from '@jest/globals';
import { HOUR, T0, makeJob, makeNode, makeNodes, makeQuota, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { checkSafetyInvariants } from './invariants.js';

const quota = makeQuota('vision', 'h100-80gb').nominal(1000);
const ZONE = 'topology.kubernetes.io/zone';
const inZone = (zone: string) => (b: ReturnType<typeof makeNode>) => b.labels({ [ZONE]: zone, pool: 'reserved' });

describe('node selectors: a job is placed only on nodes carrying its labels', () => {
  it('places every replica on matching nodes, even when others are tighter', () => {
    const nodes = [...makeNodes('a', 2, inZone('a')), ...makeNodes('b', 2, (n) => inZone('b')(n).external(4))];
    const r = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(2).accelerators(4).nodeSelector({ [ZONE]: 'a' })).build());
    expect(r.admissions[0]!.placement.map((p) => p.node)).toEqual(['a-0', 'a-0']);
    // Without the selector best fit takes the half-used zone-b nodes.
    const free = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(2).accelerators(4)).build());
    expect(free.admissions[0]!.placement.map((p) => p.node)).toEqual(['b-0', 'b-1']);
  });

  it('every label must match; combined with a topology level, the group is chosen among matching nodes', () => {
    const nodes = [
      makeNode('a1').labels({ [ZONE]: 'a', pool: 'spot' }).block('b1'),
      makeNode('a2').labels({ [ZONE]: 'a', pool: 'reserved' }).block('b1'),
      makeNode('a3').labels({ [ZONE]: 'a', pool: 'reserved' }).block('b2'),
      makeNode('a4').labels({ [ZONE]: 'a', pool: 'reserved' }).block('b2'),
    ];
    const job = makeJob('j').replicas(2).accelerators(8).topology('block').nodeSelector({ [ZONE]: 'a', pool: 'reserved' });
    const r = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(job).build());
    expect(r.admissions[0]!.placement.map((p) => p.node)).toEqual(['a3', 'a4']);
  });

  it('no node carries the labels: UNSATISFIABLE naming the selector', () => {
    const r = runCycle(snapshot().nodes(...makeNodes('a', 2, inZone('a'))).quotas(quota).pending(makeJob('j').accelerators(8).nodeSelector({ [ZONE]: 'c' })).build());
    expect(r.admissions).toEqual([]);
    expect(r.pending[0]).toMatchObject({
      code: 'UNSATISFIABLE',
      message: 'needs 8 h100-80gb on nodes labelled topology.kubernetes.io/zone=c (its nodeSelector); no schedulable h100-80gb node carries that label',
    });
  });

  it('matching nodes too few in all: UNSATISFIABLE with their total; busy: INSUFFICIENT_CAPACITY naming them', () => {
    const nodes = [...makeNodes('a', 1, inZone('a')), ...makeNodes('b', 3, inZone('b'))];
    const big = runCycle(snapshot().nodes(...nodes).quotas(quota).pending(makeJob('j').replicas(2).accelerators(8).nodeSelector({ [ZONE]: 'a' })).build());
    expect(big.pending[0]).toMatchObject({ code: 'UNSATISFIABLE', message: expect.stringContaining('the schedulable h100-80gb nodes labelled so have 8 in all') });

    const holder = makeJob('holder').accelerators(8).runsOn('a-0');
    const busy = runCycle(snapshot().nodes(...nodes).quotas(quota).running(holder).pending(makeJob('j').accelerators(8).nodeSelector({ [ZONE]: 'a' })).options({ preemption: false }).build());
    expect(busy.admissions).toEqual([]);
    expect(busy.pending[0]).toMatchObject({ code: 'INSUFFICIENT_CAPACITY', message: expect.stringContaining('on nodes labelled topology.kubernetes.io/zone=a; room for 0 there now') });
  });

  it('preemption frees matching nodes only: the victim on the matching node goes, not the one elsewhere', () => {
    const nodes = [makeNode('a-0').labels({ [ZONE]: 'a' }), makeNode('b-0').labels({ [ZONE]: 'b' })];
    // on-a ran 10 h (loses more work): without the selector the core would take on-b.
    const onA = makeJob('on-a').accelerators(8).priority(0).runsOn('a-0').admittedAt(T0 - 10 * HOUR);
    const onB = makeJob('on-b').accelerators(8).priority(0).runsOn('b-0');
    const s = snapshot().nodes(...nodes).quotas(quota).running(onA, onB).pending(makeJob('urgent').accelerators(8).priority(100).nodeSelector({ [ZONE]: 'a' })).build();
    const r = runCycle(s);
    expect(r.preemptions.map((p) => p.victimJobId)).toEqual(['on-a']);
    expect(r.admissions[0]!.placement.map((p) => p.node)).toEqual(['a-0']);
    expect(checkSafetyInvariants(s, r)).toEqual([]);
    const anywhere = runCycle({ ...s, pending: [{ ...s.pending[0]!, topology: { level: 'none' } }] });
    expect(anywhere.preemptions.map((p) => p.victimJobId)).toEqual(['on-b']);
  });

  it('the safety guard catches an admission on a node that does not match', () => {
    const s = snapshot().nodes(makeNode('a-0').labels({ [ZONE]: 'a' }), makeNode('b-0').labels({ [ZONE]: 'b' })).quotas(quota).pending(makeJob('j').accelerators(8).nodeSelector({ [ZONE]: 'a' })).build();
    const r = runCycle(s);
    r.admissions[0]!.placement[0]!.node = 'b-0';
    expect(checkSafetyInvariants(s, r).map((v) => v.code)).toContain('NODE_SELECTOR_MISMATCH');
  });

  it('a malformed selector makes the job INVALID, not the cycle throw', () => {
    const job = { ...makeJob('j').accelerators(8).build(), topology: { level: 'none' as const, nodeSelector: { [ZONE]: 7 } as unknown as Record<string, string> } };
    const r = runCycle(snapshot().nodes(makeNode('a-0')).quotas(quota).pending(job).build());
    expect(r.pending[0]).toMatchObject({ code: 'INVALID', message: expect.stringContaining('nodeSelector') });
  });
});
