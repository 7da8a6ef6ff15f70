import { describe, expect, it } from '@jest/globals';
import { makeJob, makeQuota, makeTeam, snapshot } from '#testing';
import { teamUsage, usageInputsOf } from './usage.js';

const H100 = 'h100-80gb';
/** No CPU or memory cap; what the team's replicas hold of each (the builder's 1000m and 1024 MiB per replica). */
const uncapped = (cpuMillisUsed: number, memoryMiBUsed: number) => ({ cpuMillisLimit: null, memoryMiBLimit: null, cpuMillisUsed, memoryMiBUsed });

describe('teamUsage', () => {
  it('derives used, borrowed, lent and pending demand from allocations', () => {
    const s = snapshot()
      .teams(makeTeam('vision').cohort('research'), makeTeam('nlp').cohort('research'), makeTeam('audio'))
      .quotas(
        makeQuota('vision', H100).nominal(16).borrowingLimit(8),
        makeQuota('nlp', H100).nominal(16).lendingLimit(4).cpuLimit(64_000),
        makeQuota('audio', 'a100-40gb').nominal(4),
      )
      .running(
        makeJob('v').team('vision').replicas(3).accelerators(8).runsOn('n1', 'n2', 'n3'),
        makeJob('n').team('nlp').accelerators(4).runsOn('n4'),
      )
      .pending(makeJob('p').team('nlp').replicas(2).accelerators(8), makeJob('q').team('audio').flavors(H100, 'a100-40gb').accelerators(2))
      .build();
    expect(teamUsage(usageInputsOf(s))).toEqual([
      { team: 'audio', flavor: 'a100-40gb', nominal: 4, borrowingLimit: null, lendingLimit: null, used: 0, borrowed: 0, lent: 0, pendingDemand: 2, ...uncapped(0, 0) },
      { team: 'nlp', flavor: H100, nominal: 16, borrowingLimit: null, lendingLimit: 4, used: 4, borrowed: 0, lent: 4, pendingDemand: 16, ...uncapped(1000, 1024), cpuMillisLimit: 64_000 },
      { team: 'vision', flavor: H100, nominal: 16, borrowingLimit: 8, lendingLimit: null, used: 24, borrowed: 8, lent: 0, pendingDemand: 0, ...uncapped(3000, 3072) },
    ]);
  });

  it('usage of a flavor without quota shows up with nominal 0', () => {
    const s = snapshot().teams(makeTeam('vision')).running(makeJob('v').accelerators(2).runsOn('n1')).build();
    expect(teamUsage(usageInputsOf(s))).toEqual([
      { team: 'vision', flavor: H100, nominal: 0, borrowingLimit: 0, lendingLimit: 0, used: 2, borrowed: 2, lent: 0, pendingDemand: 0, ...uncapped(1000, 1024) },
    ]);
  });
});
