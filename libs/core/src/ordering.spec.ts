import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNode, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';

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
