import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { CycleResult, Snapshot } from '#core';
import { arbScenario } from './arbitraries.js';
import { applyCycleResult, applyEvent, initialSnapshot, type IdSource } from './cycle-driver.js';

function playEvents(seed: number): Snapshot[] {
  const [scenario] = fc.sample(arbScenario(), { numRuns: 1, seed });
  const ids: IdSource = { next: 0 };
  let s = initialSnapshot(scenario!);
  const out = [s];
  for (const e of scenario!.events) out.push((s = applyEvent(s, e, ids)));
  return out;
}

describe('generated worlds', () => {
  it('are well-formed: unique names, quotas and nodes refer to what exists, job ids unique', () => {
    for (let seed = 1; seed <= 200; seed++) {
      for (const s of playEvents(seed)) {
        const flavors = new Set(s.flavors.map((f) => f.name));
        const teams = new Set(s.teams.map((t) => t.name));
        expect(new Set(s.nodes.map((n) => n.name)).size).toBe(s.nodes.length);
        for (const n of s.nodes) expect(flavors.has(n.flavor)).toBe(true);
        for (const q of s.quotas) expect(teams.has(q.team) && flavors.has(q.flavor)).toBe(true);
        for (const t of s.teams) if (t.cohort !== null) expect(s.cohorts.map((c) => c.name)).toContain(t.cohort);
        const ids = [...s.pending, ...s.running].map((j) => j.id);
        expect(new Set(ids).size).toBe(ids.length);
        for (const j of s.pending) expect(j.minReplicas).toBeLessThanOrEqual(j.replicas);
      }
    }
  });

  it('cover TPU slices, cordoned nodes, external usage, every policy and null limits', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 300; seed++) {
      const s = playEvents(seed)[0]!;
      for (const n of s.nodes) {
        if (n.topology.tpuShape) seen.add('tpu');
        if (!n.schedulable) seen.add('cordoned');
        if (n.external) seen.add('external');
      }
      for (const t of s.teams) seen.add(`within:${t.preemption.withinTeam}`).add(`reclaim:${t.preemption.reclaimWithinCohort}`);
      for (const q of s.quotas) if (q.borrowingLimit === null && q.lendingLimit === null) seen.add('null-limits');
    }
    expect([...seen].sort()).toEqual(
      ['within:LowerOrNewerEqualPriority', 'within:LowerPriority', 'within:Never', 'cordoned', 'external', 'null-limits', 'reclaim:Any', 'reclaim:LowerPriority', 'reclaim:Never', 'tpu'].sort(),
    );
  });
});

describe('applyCycleResult', () => {
  const base: Snapshot = {
    now: 5000,
    flavors: [],
    nodes: [],
    cohorts: [],
    teams: [],
    quotas: [],
    options: { preemption: true, minRuntimeBeforePreemptionSeconds: 0, backfill: true, reservationDepth: 1, defaultExpectedRuntimeSeconds: 60, maxAdmissionsPerTeamPerCycle: null },
    pending: [
      { id: 'p', name: 'p', team: 't', kind: 'training', priority: 5, preemptible: true, replicas: 1, minReplicas: 1, acceleratorsPerReplica: 1, cpuMillisPerReplica: 1, memoryMiBPerReplica: 1, flavors: ['f'], flavorSelection: 'preference', topology: { level: 'none' }, expectedRuntimeSeconds: null, submittedAt: 4000, queuedAt: 4000 },
    ],
    running: [
      { id: 'r', name: 'r', team: 't', kind: 'training', priority: 1, preemptible: true, replicas: 1, minReplicas: 1, acceleratorsPerReplica: 1, cpuMillisPerReplica: 1, memoryMiBPerReplica: 1, flavors: ['f'], flavorSelection: 'preference', topology: { level: 'none' }, expectedRuntimeSeconds: null, submittedAt: 100, flavor: 'f', placement: [{ replica: 0, node: 'n', accelerators: 1, cpuMillis: 1, memoryMiB: 1 }], admittedAt: 200 },
    ],
  };
  const result: CycleResult = {
    admissions: [{ jobId: 'p', team: 't', flavor: 'f', replicas: 1, placement: [{ replica: 0, node: 'n', accelerators: 1, cpuMillis: 1, memoryMiB: 1 }], borrowed: 0, preempts: ['r'] }],
    preemptions: [{ victimJobId: 'r', victimTeam: 't', preemptorJobId: 'p', kind: 'WithinTeam', message: '' }],
    reservations: [],
    pending: [],
    stats: { considered: 1, admitted: 1, preempted: 1, reserved: 0 },
  };

  it('runs admissions from now and requeues victims with their original submission time', () => {
    const after = applyCycleResult(base, result);
    expect(after.running.map((j) => [j.id, j.admittedAt, j.flavor])).toEqual([['p', 5000, 'f']]);
    expect(after.pending.map((j) => [j.id, j.submittedAt, j.queuedAt, 'placement' in j])).toEqual([['r', 100, 5000, false]]);
    expect(base.running[0]!.id).toBe('r'); // input untouched
  });
});
