import { describe, expect, it } from '@jest/globals';
import { makeJob, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { checkInvariants, formatViolations } from './invariants.js';
import type { CycleResult, Snapshot } from './model.js';

const H100 = 'h100-80gb';
const GiB = 1024;

function cycle(s: Snapshot): CycleResult {
  const result = runCycle(s);
  expect(formatViolations(checkInvariants(s, result))).toBe('');
  return result;
}

const pendingOf = (r: CycleResult, id: string) => r.pending.find((p) => p.jobId === id);
const admittedIds = (r: CycleResult): string[] => r.admissions.map((a) => a.jobId);

describe('CPU and memory caps per team and flavor', () => {
  // Two 8-GPU nodes with 64 cores and 512 GiB each: the only nodes, as on many fleets.
  const nodes = () => makeNodes('n', 2, (b) => b.accelerators(8).cpu(64_000).memory(512 * GiB));

  it('charges a job without accelerators to its team’s CPU cap on the flavor, and keeps it within', () => {
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('etl'))
      .quotas(makeQuota('etl', H100).nominal(0).cpuLimit(16_000))
      .pending(
        makeJob('prep-a').team('etl').replicas(1).accelerators(0).cpu(12_000).memory(8 * GiB).submittedAt(1),
        makeJob('prep-b').team('etl').replicas(1).accelerators(0).cpu(12_000).memory(8 * GiB).submittedAt(2),
      )
      .build();
    const r = cycle(s);
    expect(admittedIds(r)).toEqual(['prep-a']);
    expect(pendingOf(r, 'prep-b')).toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(pendingOf(r, 'prep-b')!.message).toContain("team etl's jobs hold 12000m CPU of its 16000m CPU limit on h100-80gb nodes; needs 12000m CPU more");
  });

  it('counts running work against the cap, whatever it holds of accelerators', () => {
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16).memoryLimit(256 * GiB))
      .running(makeJob('train').team('vision').replicas(1).accelerators(8).cpu(8000).memory(200 * GiB).runsOn('n-0'))
      .pending(makeJob('eval').team('vision').replicas(1).accelerators(4).cpu(4000).memory(64 * GiB))
      .build();
    const r = cycle(s);
    expect(admittedIds(r)).toEqual([]);
    expect(pendingOf(r, 'eval')).toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(pendingOf(r, 'eval')!.message).toContain("team vision's jobs hold 204800 MiB memory of its 262144 MiB memory limit on h100-80gb nodes; needs 65536 MiB memory more");
  });

  it('never admits a job whose minimum exceeds the cap, and says it never will', () => {
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('etl'))
      .quotas(makeQuota('etl', H100).nominal(8).cpuLimit(4000))
      .pending(makeJob('big').team('etl').replicas(2).accelerators(0).cpu(3000))
      .build();
    const r = cycle(s);
    expect(pendingOf(r, 'big')).toMatchObject({ code: 'UNSATISFIABLE' });
    expect(pendingOf(r, 'big')!.message).toBe("needs 6000m CPU on h100-80gb nodes but team etl's CPU limit there is 4000m CPU");
  });

  it('grows an elastic gang only as far as the cap allows', () => {
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('etl'))
      .quotas(makeQuota('etl', H100).nominal(0).cpuLimit(10_000))
      .pending(makeJob('shards').team('etl').replicas(8).minReplicas(2).accelerators(0).cpu(3000))
      .build();
    const r = cycle(s);
    expect(r.admissions).toHaveLength(1);
    expect(r.admissions[0]!.placement).toHaveLength(3);
  });

  it('keeps a multi-role gang’s CPU-only driver within the cap, at its minimum counts when the full counts exceed it', () => {
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16).cpuLimit(40_000))
      .pending(
        makeJob('js')
          .team('vision')
          .roles(['driver', 1, 0, 16_000, 16 * GiB], ['workers', 4, 4, 8000, 64 * GiB, 2]),
      )
      .build();
    const r = cycle(s);
    expect(r.admissions).toHaveLength(1);
    const cpu = r.admissions[0]!.placement.reduce((sum, p) => sum + p.cpuMillis, 0);
    expect(cpu).toBe(16_000 + 2 * 8000);
  });

  it('lets another team’s in-quota GPU job fit beside a capped CPU-only team', () => {
    // Without the cap, etl's 12 CPU-only replicas of 10 cores each would take 120 of the 128 cores.
    const s = snapshot()
      .nodes(...nodes())
      .teams(makeTeam('etl'), makeTeam('vision'))
      .quotas(makeQuota('etl', H100).nominal(0).cpuLimit(40_000), makeQuota('vision', H100).nominal(16))
      .pending(
        makeJob('prep').team('etl').replicas(12).minReplicas(1).accelerators(0).cpu(10_000).priority(10).submittedAt(1),
        makeJob('train').team('vision').replicas(2).accelerators(8).cpu(16_000).submittedAt(2),
      )
      .build();
    const r = cycle(s);
    expect(admittedIds(r).sort()).toEqual(['prep', 'train']);
    expect(r.admissions.find((a) => a.jobId === 'prep')!.placement).toHaveLength(4);
  });
});
