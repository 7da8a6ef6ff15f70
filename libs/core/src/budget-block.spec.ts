import { describe, expect, it } from '@jest/globals';
import { MINUTE, T0, makeJob, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';

const H100 = 'h100-80gb';
const NEXT_MONTH = Date.UTC(2026, 11, 1);

function world(blocked: boolean) {
  const s = snapshot()
    .nodes(...makeNodes('n', 4))
    .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'))
    .quotas(makeQuota('vision', H100).nominal(16), makeQuota('nlp', H100).nominal(16))
    .running(makeJob('r-v').team('vision').accelerators(8).runsOn('n-0').runtime(3600))
    .pending(
      makeJob('v-1').team('vision').accelerators(8).priority(10).submittedAt(T0 - 3 * MINUTE),
      makeJob('n-1').team('nlp').accelerators(8).submittedAt(T0 - 2 * MINUTE),
      makeJob('v-2').team('vision').accelerators(4).submittedAt(T0 - MINUTE),
    )
    .build();
  return blocked ? { ...s, budgetBlocks: [{ team: 'vision', until: NEXT_MONTH, message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11' }] } : s;
}

describe('budget blocks (Snapshot.budgetBlocks)', () => {
  it('leave the team\'s pending jobs pending with BUDGET_EXHAUSTED until the next period; other teams are admitted; running jobs stay', () => {
    const r = runCycle(world(true));
    expect(r.admissions.map((a) => a.jobId)).toEqual(['n-1']);
    expect(r.preemptions).toEqual([]);
    expect(r.pending).toEqual([
      { jobId: 'v-1', code: 'BUDGET_EXHAUSTED', message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11', position: 1, estimatedStartAt: NEXT_MONTH },
      { jobId: 'v-2', code: 'BUDGET_EXHAUSTED', message: 'team vision used 1,002 of its 1,000 accelerator-hours of 2026-11', position: 2, estimatedStartAt: NEXT_MONTH },
    ]);
    expect(r.reservations).toEqual([]);
  });

  it('change nothing when absent or for other teams', () => {
    const free = runCycle(world(false));
    expect(free.admissions.map((a) => a.jobId).sort()).toEqual(['n-1', 'v-1', 'v-2']);
    expect(runCycle({ ...world(false), budgetBlocks: [{ team: 'audio', until: NEXT_MONTH, message: 'x' }] })).toEqual(free);
  });
});
