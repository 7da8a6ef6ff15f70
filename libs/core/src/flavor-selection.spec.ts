import { describe, expect, it } from '@jest/globals';
import { DEFAULT_OPTIONS, type FlavorSelection } from './model.js';
import { makeFlavor, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { flavorOrder } from './flavor-selection.js';

const flavors = new Map(
  [makeFlavor('a100-40gb').speed(1), makeFlavor('h100-80gb').speed(2), makeFlavor('gaudi2').speed(1.1)].map((b) => {
    const f = b.build();
    return [f.name, f] as const;
  }),
);

describe('flavor order', () => {
  it.each([
    { name: 'preference: as listed', selection: 'preference', speeds: undefined, want: ['a100-40gb', 'gaudi2', 'h100-80gb'] },
    { name: 'fastest: by relativeSpeed', selection: 'fastest', speeds: undefined, want: ['h100-80gb', 'gaudi2', 'a100-40gb'] },
    {
      name: 'fastest: the job speeds map overrides the flavor speed',
      selection: 'fastest',
      speeds: { 'a100-40gb': 3 },
      want: ['a100-40gb', 'h100-80gb', 'gaudi2'],
    },
    {
      name: 'fastest: ties keep listed order',
      selection: 'fastest',
      speeds: { 'a100-40gb': 2, 'gaudi2': 2, 'h100-80gb': 2 },
      want: ['a100-40gb', 'gaudi2', 'h100-80gb'],
    },
  ] as { name: string; selection: FlavorSelection; speeds: Record<string, number> | undefined; want: string[] }[])(
    '$name',
    ({ selection, speeds, want }) => {
      let b = makeJob('j').flavors('a100-40gb', 'gaudi2', 'h100-80gb').selection(selection);
      if (speeds !== undefined) b = b.speeds(speeds);
      expect(flavorOrder(b.build(), flavors, DEFAULT_OPTIONS)).toEqual(want);
    },
  );

  it('random override is a seeded shuffle: same seed same order, and every flavor kept', () => {
    const job = makeJob('j').flavors('a100-40gb', 'gaudi2', 'h100-80gb').build();
    const opts = { ...DEFAULT_OPTIONS, flavorSelectionOverride: 'random' as const, seed: 42 };
    const a = flavorOrder(job, flavors, opts);
    expect(flavorOrder(job, flavors, opts)).toEqual(a);
    expect([...a].sort()).toEqual(['a100-40gb', 'gaudi2', 'h100-80gb']);
    const orders = new Set(Array.from({ length: 20 }, (_, seed) => flavorOrder(job, flavors, { ...opts, seed }).join(',')));
    expect(orders.size).toBeGreaterThan(1);
  });
});

describe('heterogeneous admission', () => {
  const nodes = [makeNode('a').flavor('a100-40gb'), makeNode('h').flavor('h100-80gb')];
  it('falls back to the next flavor when the first is full, and quota is per flavor', () => {
    const s = snapshot()
      .flavors(...flavors.values())
      .nodes(...nodes)
      .quotas(makeQuota('vision', 'h100-80gb').nominal(8), makeQuota('vision', 'a100-40gb').nominal(8))
      .running(makeJob('r').flavors('h100-80gb').accelerators(8).runsOn('h'))
      .pending(makeJob('j').flavors('h100-80gb', 'a100-40gb').accelerators(4))
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((x) => [x.jobId, x.flavor])).toEqual([['j', 'a100-40gb']]);
  });

  it('fastest picks the faster flavor even when listed second', () => {
    const s = snapshot()
      .flavors(...flavors.values())
      .nodes(...nodes)
      .quotas(makeQuota('vision', 'h100-80gb').nominal(8), makeQuota('vision', 'a100-40gb').nominal(8))
      .pending(makeJob('j').flavors('a100-40gb', 'h100-80gb').selection('fastest').accelerators(4))
      .build();
    expect(runCycle(s).admissions[0]!.flavor).toBe('h100-80gb');
  });

  it('tries every flavor without preemption before preempting on the first', () => {
    const s = snapshot()
      .flavors(...flavors.values())
      .nodes(...nodes)
      .quotas(makeQuota('vision', 'h100-80gb').nominal(8), makeQuota('vision', 'a100-40gb').nominal(8))
      .running(makeJob('low').flavors('h100-80gb').accelerators(8).priority(0).runsOn('h'))
      .pending(makeJob('high').flavors('h100-80gb', 'a100-40gb').accelerators(8).priority(10))
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((x) => [x.flavor, x.preempts])).toEqual([['a100-40gb', []]]);
    expect(r.preemptions).toEqual([]);
  });
});
