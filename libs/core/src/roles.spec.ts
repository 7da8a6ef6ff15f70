import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { T0, makeJob, makeNodes, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import { checkInvariants, formatViolations } from './invariants.js';
import type { Admission, Snapshot } from './model.js';
import { rolesProblem } from './roles.js';

const H100 = 'h100-80gb';
const GiB = 1024;

const charged = (a: Admission): number => a.placement.reduce((sum, p) => sum + p.accelerators, 0);

function admitted(s: Snapshot, id: string): Admission {
  const result = runCycle(s);
  expect(formatViolations(checkInvariants(s, result))).toBe('');
  const a = result.admissions.find((x) => x.jobId === id);
  if (a === undefined) throw new Error(`${id} not admitted: ${JSON.stringify(result.pending.find((p) => p.jobId === id))}`);
  return a;
}

describe('multi-role gangs', () => {
  it('charges a JobSet with a CPU-only driver for its workers only, and puts the driver on a node the gang uses', () => {
    // 4 × 8-GPU workers and a driver without accelerators; the team has exactly the 32 the workers need.
    const s = snapshot()
      .nodes(...makeNodes('n', 4, (b) => b.accelerators(8).cpu(64_000).memory(512 * GiB)))
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(32))
      .pending(makeJob('js').team('vision').roles(['driver', 1, 0, 4000, 16 * GiB], ['worker', 4, 8, 8000, 64 * GiB]))
      .build();
    const a = admitted(s, 'js');
    expect(charged(a)).toBe(32);
    expect(a.replicas).toBe(5);
    const driver = a.placement.filter((p) => p.role === 'driver');
    const workers = a.placement.filter((p) => p.role === 'worker');
    expect(driver).toEqual([expect.objectContaining({ accelerators: 0, cpuMillis: 4000, memoryMiB: 16 * GiB })]);
    expect(workers.map((p) => p.accelerators)).toEqual([8, 8, 8, 8]);
    expect(workers.map((p) => p.node)).toContain(driver[0]!.node);
    // Replicas are numbered role after role, as the job lists them.
    expect(a.placement.map((p) => [p.replica, p.role])).toEqual([[0, 'driver'], [1, 'worker'], [2, 'worker'], [3, 'worker'], [4, 'worker']]);
  });

  it('charges a RayJob its actors at 2 and its learners at 4, not every pod at the largest', () => {
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(8)))
      .teams(makeTeam('rl'))
      .quotas(makeQuota('rl', H100).nominal(12))
      .pending(makeJob('ray').team('rl').roles(['head', 1, 0, 2000, 8 * GiB], ['actors', 2, 2, 4000, 16 * GiB], ['learners', 2, 4, 8000, 32 * GiB]))
      .build();
    const a = admitted(s, 'ray');
    expect(charged(a)).toBe(12);
    expect(a.placement.filter((p) => p.role === 'actors').map((p) => p.accelerators)).toEqual([2, 2]);
    expect(a.placement.filter((p) => p.role === 'learners').map((p) => p.accelerators)).toEqual([4, 4]);
  });

  it('applies a LeaderWorkerSet leader’s memory to the leader only', () => {
    // Two nodes of 16 GPUs and 320 GiB: leader (200 GiB) + 3 workers (100 GiB each), 8 GPUs each. With the
    // leader's memory on every pod, two pods never share a node and the gang needs four.
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(16).memory(320 * GiB)))
      .teams(makeTeam('serve'))
      .quotas(makeQuota('serve', H100).nominal(32))
      .pending(makeJob('lws').team('serve').kind('serving').roles(['leader', 1, 8, 4000, 200 * GiB], ['worker', 3, 8, 4000, 100 * GiB]))
      .build();
    const a = admitted(s, 'lws');
    expect(a.placement.find((p) => p.role === 'leader')!.memoryMiB).toBe(200 * GiB);
    expect(a.placement.filter((p) => p.role === 'worker').every((p) => p.memoryMiB === 100 * GiB)).toBe(true);
  });

  it('keeps the accelerator roles in one topology group', () => {
    // Block b0 has one node with room, b1 two: 2 actors × 4 + 1 learner × 8 = 16 only fits in b1.
    const s = snapshot()
      .nodes(...makeNodes('n', 3, (b, i) => b.accelerators(8).block(i === 0 ? 'b0' : 'b1')))
      .teams(makeTeam('rl'))
      .quotas(makeQuota('rl', H100).nominal(24))
      .pending(makeJob('ray').team('rl').topology('block').roles(['actors', 2, 4, 1000, GiB], ['learner', 1, 8, 1000, GiB]))
      .build();
    const a = admitted(s, 'ray');
    expect(new Set(a.placement.map((p) => p.node))).toEqual(new Set(['n-1', 'n-2']));
  });

  it('names the resource that is short for a role that does not fit', () => {
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(8).memory(256 * GiB)))
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .pending(makeJob('js').team('vision').roles(['driver', 1, 0, 1000, 300 * GiB], ['worker', 2, 8, 1000, GiB]))
      .build();
    const result = runCycle(s);
    expect(result.admissions).toEqual([]);
    expect(result.pending[0]).toMatchObject({ code: 'INSUFFICIENT_CAPACITY' });
    expect(result.pending[0]!.message).toContain('role driver');
    expect(result.pending[0]!.message).toContain('short of memory');
  });

  it('starts an elastic role at its minimum when its full count does not fit', () => {
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(8)))
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .pending(makeJob('js').team('vision').roles(['launcher', 1, 0, 1000, GiB], ['worker', 4, 8, 1000, GiB, 2]))
      .build();
    const a = admitted(s, 'js');
    expect(a.placement.filter((p) => p.role === 'worker')).toHaveLength(2);
    expect(charged(a)).toBe(16);
  });

  it('preempts for a multi-role gang only what its accelerator roles need', () => {
    // Two low-priority 8-GPU jobs fill both nodes; the preemptor's driver needs no GPU and its one worker 8.
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(8)))
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .running(
        makeJob('old-a').team('vision').accelerators(8).runsOn('n-0').admittedAt(T0 - 3_600_000),
        makeJob('old-b').team('vision').accelerators(8).runsOn('n-1').admittedAt(T0 - 7_200_000),
      )
      .pending(makeJob('js').team('vision').priority(10).roles(['driver', 1, 0, 1000, GiB], ['worker', 1, 8, 1000, GiB]))
      .build();
    const result = runCycle(s);
    expect(formatViolations(checkInvariants(s, result))).toBe('');
    expect(result.preemptions.map((p) => p.victimJobId)).toEqual(['old-a']);
    expect(charged(result.admissions[0]!)).toBe(8);
  });

  it('preempts for roles of different sizes where their envelope would not fit (learner 8 + actors 4 × 1 on two nodes)', () => {
    // Sixteen low-priority 1-GPU jobs fill two 8-GPU nodes. The gang needs 12: a learner of 8 (a whole node) and four
    // actors of 1. As one uniform gang of its largest shape it would be 5 × 8, which two nodes never hold.
    const running = Array.from({ length: 16 }, (_, i) =>
      makeJob(`small-${String(i).padStart(2, '0')}`)
        .team('vision')
        .accelerators(1)
        .runsOn(`n-${i % 2}`)
        .admittedAt(T0 - 3_600_000 - i * 60_000),
    );
    const s = snapshot()
      .nodes(...makeNodes('n', 2, (b) => b.accelerators(8)))
      .teams(makeTeam('vision'))
      .quotas(makeQuota('vision', H100).nominal(16))
      .running(...running)
      .pending(makeJob('rl').team('vision').priority(10).roles(['learner', 1, 8, 1000, GiB], ['actors', 4, 1, 1000, GiB]))
      .build();
    const result = runCycle(s);
    expect(formatViolations(checkInvariants(s, result))).toBe('');
    expect(result.admissions.map((a) => a.jobId)).toEqual(['rl']);
    expect(charged(result.admissions[0]!)).toBe(12);
    // Exactly the 12 it needs: one node emptied for the learner, four more 1-GPU jobs for the actors.
    expect(result.preemptions).toHaveLength(12);
  });

  it('never breaks an invariant, whatever the roles (property)', () => {
    const role = fc.record({
      replicas: fc.integer({ min: 1, max: 4 }),
      min: fc.integer({ min: 1, max: 4 }),
      a: fc.constantFrom(0, 1, 2, 4, 8),
      c: fc.integer({ min: 0, max: 48_000 }),
      m: fc.integer({ min: 0, max: 600 * GiB }),
    });
    fc.assert(
      fc.property(fc.array(fc.array(role, { minLength: 2, maxLength: 3 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 48 }), fc.boolean(), (jobs, nominal, busy) => {
        // busy: two low-priority 8-GPU jobs hold n-0 and n-2, so the gangs (priority 5) preempt to start.
        const running = busy
          ? [
              makeJob('low-a').team('t').accelerators(8).priority(-1).runsOn('n-0').admittedAt(T0 - 3_600_000),
              makeJob('low-b').team('t').accelerators(8).priority(-1).runsOn('n-2').admittedAt(T0 - 7_200_000),
            ]
          : [];
        const s = snapshot()
          .nodes(...makeNodes('n', 4, (b, i) => b.accelerators(8).cpu(64_000).memory(512 * GiB).block(`b${i % 2}`)))
          .teams(makeTeam('t'))
          .quotas(makeQuota('t', H100).nominal(nominal + (busy ? 16 : 0)))
          .running(...running)
          .pending(
            ...jobs.map((roles, j) =>
              makeJob(`j${j}`)
                .team('t')
                .priority(5)
                .topology(j % 2 === 0 ? 'none' : 'block')
                .roles(...roles.map((r, k): [string, number, number, number, number, number] => [`r${k}`, r.replicas, r.a, r.c, r.m, Math.min(r.min, r.replicas)])),
            ),
          )
          .build();
        const result = runCycle(s);
        expect(formatViolations(checkInvariants(s, result))).toBe('');
        const kept = busy ? 16 - 8 * result.preemptions.length : 0;
        const used = result.admissions.reduce((sum, a) => sum + charged(a), 0);
        expect(used + kept).toBeLessThanOrEqual(nominal + (busy ? 16 : 0));
      }),
      { numRuns: 200, seed: 26 },
    );
  });

  it('refuses bad roles, naming roles[i].field', () => {
    expect(rolesProblem([])).toEqual({ field: 'roles', message: expect.any(String) });
    const ok = { name: 'w', replicas: 2, minReplicas: 1, acceleratorsPerReplica: 8, cpuMillisPerReplica: 0, memoryMiBPerReplica: 0 };
    expect(rolesProblem([ok])).toBeNull();
    expect(rolesProblem([ok, { ...ok }])?.field).toBe('roles[1].name');
    expect(rolesProblem([{ ...ok, replicas: 0 }])?.field).toBe('roles[0].replicas');
    expect(rolesProblem([{ ...ok, minReplicas: 3 }])?.field).toBe('roles[0].minReplicas');
    expect(rolesProblem([ok, { ...ok, name: 'x', acceleratorsPerReplica: -1 }])?.field).toBe('roles[1].acceleratorsPerReplica');
  });
});
