import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { agedWork } from './ordering.js';

const H100 = 'h100-80gb';
const oneNode = makeNode('n1').flavor(H100).accelerators(8);

describe('queue order', () => {
  it.each([
    {
      name: 'higher priority goes first even if submitted later',
      jobs: [makeJob('old-low').priority(1).submittedAt(T0 - 10 * MINUTE).accelerators(8), makeJob('new-high').priority(9).accelerators(8)],
      wantAdmitted: ['new-high'],
      wantPending: ['old-low'],
    },
    {
      name: 'equal priority: earlier submission first',
      jobs: [makeJob('b').submittedAt(T0 - 2 * MINUTE).accelerators(8), makeJob('a').submittedAt(T0 - MINUTE).accelerators(8)],
      wantAdmitted: ['b'],
      wantPending: ['a'],
    },
    {
      name: 'equal priority and submission: id breaks the tie',
      jobs: [makeJob('z').accelerators(8), makeJob('m').accelerators(8)],
      wantAdmitted: ['m'],
      wantPending: ['z'],
    },
  ])('$name', ({ jobs, wantAdmitted, wantPending }) => {
    const r = runCycle(snapshot().nodes(oneNode).quotas(makeQuota('vision', H100).nominal(64)).pending(...jobs).options({ preemption: false }).build());
    expect(r.admissions.map((a) => a.jobId)).toEqual(wantAdmitted);
    expect(r.pending.map((p) => p.jobId)).toEqual(wantPending);
  });

  it('fair share: among equal priorities the team with the lower dominant share goes first', () => {
    const s = snapshot()
      .nodes(makeNode('n1').flavor(H100).accelerators(8), makeNode('n2').flavor(H100).accelerators(8))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(16))
      .running(makeJob('v-run').team('vision').accelerators(6).runsOn('n1'))
      .pending(
        makeJob('v-next').team('vision').accelerators(8).submittedAt(T0 - 10 * MINUTE),
        makeJob('nlp-next').team('nlp').accelerators(8).submittedAt(T0 - MINUTE),
      )
      .options({ preemption: false })
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => a.jobId)).toEqual(['nlp-next']);
  });

  it('fair share is recomputed as the cycle admits: two teams alternate', () => {
    const s = snapshot()
      .nodes(makeNode('n1').flavor(H100).accelerators(8))
      .quotas(makeQuota('vision', H100).nominal(8), makeQuota('nlp', H100).nominal(8))
      .pending(
        ...[1, 2, 3].map((i) => makeJob(`v${i}`).team('vision').submittedAt(T0 - 10 * MINUTE + i)),
        ...[1, 2, 3].map((i) => makeJob(`n${i}`).team('nlp').submittedAt(T0 - MINUTE + i)),
      )
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => a.jobId)).toEqual(['v1', 'n1', 'v2', 'n2', 'v3', 'n3']);
  });

  it('a team of weight 2 is entitled to twice the share', () => {
    const s = snapshot()
      .nodes(makeNode('n1').flavor(H100).accelerators(8))
      .teams(makeTeam('vision').weight(2), makeTeam('nlp'))
      .quotas(makeQuota('vision', H100).nominal(8), makeQuota('nlp', H100).nominal(8))
      .pending(
        ...[1, 2, 3, 4].map((i) => makeJob(`v${i}`).team('vision').submittedAt(T0 - MINUTE + i)),
        ...[1, 2].map((i) => makeJob(`n${i}`).team('nlp').submittedAt(T0 - 10 * MINUTE + i)),
      )
      .build();
    const r = runCycle(s);
    expect(r.admissions.map((a) => a.jobId)).toEqual(['n1', 'v1', 'v2', 'n2', 'v3', 'v4']);
  });

  it('many jobs of one team are admitted in one cycle unless maxAdmissionsPerTeamPerCycle says otherwise', () => {
    const base = snapshot()
      .nodes(oneNode)
      .quotas(makeQuota('vision', H100).nominal(8))
      .pending(...[1, 2, 3].map((i) => makeJob(`j${i}`).submittedAt(T0 - MINUTE + i)));
    expect(runCycle(base.build()).admissions).toHaveLength(3);
    const limited = runCycle(base.options({ maxAdmissionsPerTeamPerCycle: 1 }).build());
    expect(limited.admissions.map((a) => a.jobId)).toEqual(['j1']);
    expect(limited.pending.map((p) => [p.jobId, p.code, p.position])).toEqual([
      ['j2', 'ADMISSION_LIMIT', 1],
      ['j3', 'ADMISSION_LIMIT', 2],
    ]);
    expect(limited.pending[0]!.message).toBe('team vision reached its limit of 1 admission this cycle');
  });
});

describe('shortest-first order (options.ordering)', () => {
  const HOUR = 60 * MINUTE;
  const run = (ordering: 'fifo' | 'shortest-first' | undefined, ...jobs: ReturnType<typeof makeJob>[]) =>
    runCycle(snapshot().nodes(oneNode).quotas(makeQuota('vision', H100).nominal(64)).pending(...jobs).options({ preemption: false, ...(ordering ? { ordering } : {}) }).build());

  it('the least expected work goes first even if submitted later; fifo (the default) keeps submission order', () => {
    const jobs = [makeJob('long').accelerators(8).runtime(10 * 3600).submittedAt(T0 - 10 * MINUTE), makeJob('short').accelerators(8).runtime(3600).submittedAt(T0 - MINUTE)];
    expect(run('shortest-first', ...jobs).admissions.map((a) => a.jobId)).toEqual(['short']);
    expect(run(undefined, ...jobs).admissions.map((a) => a.jobId)).toEqual(['long']);
    expect(run('fifo', ...jobs).admissions.map((a) => a.jobId)).toEqual(['long']);
  });

  it('work is accelerators × runtime: one accelerator for 4 h goes before eight for 1 h', () => {
    const r = run('shortest-first', makeJob('wide').accelerators(8).runtime(3600).submittedAt(T0 - 10 * MINUTE), makeJob('narrow').accelerators(1).runtime(4 * 3600).submittedAt(T0 - MINUTE));
    expect(r.admissions.map((a) => a.jobId)).toEqual(['narrow']);
    expect(r.pending.map((p) => p.jobId)).toEqual(['wide']);
  });

  it('ages: a job that has waited 15 times its runtime goes before a fresh job with a quarter of its work', () => {
    // long: 8 × 4 h = 115,200 GPU-s ÷ ((60 h + 4 h) ÷ 4 h) = 7,200; short: 8 × 1 h = 28,800 ÷ 1;
    // oldest (first in FIFO order): 8 × 100 h ÷ ((61 h + 100 h) ÷ 100 h) ≈ 1.8 M.
    const r = run(
      'shortest-first',
      makeJob('short').accelerators(8).runtime(3600).submittedAt(T0),
      makeJob('long').accelerators(8).runtime(4 * 3600).submittedAt(T0 - 60 * HOUR),
      makeJob('oldest').accelerators(8).runtime(100 * 3600).submittedAt(T0 - 61 * HOUR),
    );
    expect(r.admissions.map((a) => a.jobId)).toEqual(['long']);
    expect(r.pending.map((p) => p.jobId)).toEqual(['short', 'oldest']);
  });

  it('an unknown runtime counts as the default runtime', () => {
    const jobs = [makeJob('known').accelerators(8).runtime(2 * 3600).submittedAt(T0 - 2 * MINUTE), makeJob('unknown').accelerators(8).runtime(null).submittedAt(T0 - MINUTE)];
    expect(run('shortest-first', ...jobs).admissions.map((a) => a.jobId)).toEqual(['unknown']);
    const longDefault = runCycle(
      snapshot().nodes(oneNode).quotas(makeQuota('vision', H100).nominal(64)).pending(...jobs).options({ preemption: false, ordering: 'shortest-first', defaultExpectedRuntimeSeconds: 4 * 3600 }).build(),
    );
    expect(longDefault.admissions.map((a) => a.jobId)).toEqual(['known']);
  });

  it('priority still comes first', () => {
    const r = run('shortest-first', makeJob('short-low').accelerators(8).runtime(60).priority(1), makeJob('long-high').accelerators(8).runtime(10 * 3600).priority(9));
    expect(r.admissions.map((a) => a.jobId)).toEqual(['long-high']);
  });

  it('fair share between teams still comes before work', () => {
    const s = snapshot()
      .nodes(makeNode('n1').flavor(H100).accelerators(8), makeNode('n2').flavor(H100).accelerators(8))
      .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(16))
      .running(makeJob('v-run').team('vision').accelerators(6).runsOn('n1'))
      .pending(makeJob('v-short').team('vision').accelerators(8).runtime(60), makeJob('nlp-long').team('nlp').accelerators(8).runtime(10 * 3600))
      .options({ preemption: false, ordering: 'shortest-first' })
      .build();
    expect(runCycle(s).admissions.map((a) => a.jobId)).toEqual(['nlp-long']);
  });

  it('malformed figures get the largest key, never NaN', () => {
    const base = makeJob('x').accelerators(8).runtime(3600).submittedAt(T0).build();
    expect(agedWork(base, T0, 3600)).toBe(8 * 3600);
    expect(agedWork({ ...base, expectedRuntimeSeconds: Number.NaN }, T0, 3600)).toBe(Number.MAX_VALUE);
    expect(agedWork({ ...base, expectedRuntimeSeconds: -5 }, T0, 3600)).toBe(Number.MAX_VALUE);
    expect(agedWork({ ...base, expectedRuntimeSeconds: 0 }, T0, 3600)).toBe(0);
  });
});
