import { describe, expect, it } from '@jest/globals';
import { T0, makeFlavor, makeJob, makeNode, makeQuota, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { explain } from './reasons.js';

describe('explain', () => {
  it.each([
    {
      name: 'the failure closest to starting wins, the others follow',
      failures: [
        { flavor: 'a100-40gb', code: 'QUOTA_EXCEEDED' as const, message: 'team vision uses 8 of 8 nominal a100-40gb (no cohort to borrow from); needs 8 more' },
        { flavor: 'h100-80gb', code: 'INSUFFICIENT_CAPACITY' as const, message: 'needs 1 × 8 free h100-80gb; room for 0 now (4 h100-80gb free in total)' },
      ],
      reservation: undefined,
      wantCode: 'INSUFFICIENT_CAPACITY',
      wantMessage:
        'needs 1 × 8 free h100-80gb; room for 0 now (4 h100-80gb free in total); on a100-40gb: team vision uses 8 of 8 nominal a100-40gb (no cohort to borrow from); needs 8 more',
    },
    {
      name: 'the reserved start is appended',
      failures: [{ flavor: 'h100-80gb', code: 'COHORT_EXHAUSTED' as const, message: 'team vision uses 32 of 32 nominal h100-80gb; cohort research has 0 idle; needs 8' }],
      reservation: { flavor: 'h100-80gb', startAt: T0, nodes: 4 },
      wantCode: 'COHORT_EXHAUSTED',
      wantMessage: 'team vision uses 32 of 32 nominal h100-80gb; cohort research has 0 idle; needs 8; reserved to start at 2026-01-01T12:00:00.000Z on 4 h100-80gb nodes',
    },
  ])('$name', ({ failures, reservation, wantCode, wantMessage }) => {
    expect(explain(failures, reservation)).toEqual({ code: wantCode, message: wantMessage });
  });
});

describe('pending reasons name team, flavor and figures', () => {
  it.each([
    {
      name: 'no quota for any flavor',
      quotas: [makeQuota('vision', 'a100-40gb').nominal(8)],
      job: makeJob('j').flavors('h100-80gb'),
      wantCode: 'NO_QUOTA',
      wantMessage: 'team vision has no quota for h100-80gb',
    },
    {
      name: 'larger than the quota ceiling',
      quotas: [makeQuota('vision', 'h100-80gb').nominal(8)],
      job: makeJob('j').replicas(2).accelerators(8),
      wantCode: 'UNSATISFIABLE',
      wantMessage: 'needs 16 h100-80gb but team vision can never hold more than 8 (nominal 8, borrowing limit unlimited)',
    },
    {
      name: 'a replica larger than any node',
      quotas: [makeQuota('vision', 'h100-80gb').nominal(64)],
      job: makeJob('j').accelerators(16),
      wantCode: 'UNSATISFIABLE',
      wantMessage: 'needs 16 h100-80gb per replica; the largest schedulable h100-80gb node has 8',
    },
  ])('$name', ({ quotas, job, wantCode, wantMessage }) => {
    const r = runCycle(snapshot().flavors(makeFlavor('h100-80gb'), makeFlavor('a100-40gb')).nodes(makeNode('n1')).quotas(...quotas).pending(job).build());
    expect(r.pending[0]).toMatchObject({ code: wantCode, message: wantMessage, estimatedStartAt: null });
  });
});
