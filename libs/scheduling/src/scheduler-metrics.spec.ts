import { describe, expect, it } from '@jest/globals';
import { DEFAULT_OPTIONS, type CycleResult, type RunningJob, type Snapshot } from '#core';
import { Registry } from 'prom-client';
import type { CycleReport } from './cycle-runner.js';
import { SchedulerMetrics } from './scheduler-metrics.js';

const spec = { kind: 'training' as const, priority: 1, preemptible: true, minReplicas: 1, cpuMillisPerReplica: 0, memoryMiBPerReplica: 0, flavorSelection: 'preference' as const, topology: { level: 'none' as const }, expectedRuntimeSeconds: null };

function running(id: string, team: string, accelerators: number): RunningJob {
  return { ...spec, id, name: id, team, replicas: 1, acceleratorsPerReplica: accelerators, flavors: ['h100'], submittedAt: 0, flavor: 'h100', admittedAt: 0, placement: [{ replica: 0, node: 'n1', accelerators, cpuMillis: 0, memoryMiB: 0 }] };
}

describe('SchedulerMetrics.onCycle', () => {
  it('counts decisions, observes admission latency, and sets allocated/borrowed per team after the cycle', async () => {
    const registry = new Registry();
    const metrics = new SchedulerMetrics(registry);
    const snapshot: Snapshot = {
      now: 10_000,
      flavors: [],
      nodes: [{ name: 'n1', flavor: 'h100', accelerators: 8, cpuMillis: 0, memoryMiB: 0, topology: {}, schedulable: true }, { name: 'n2', flavor: 'h100', accelerators: 8, cpuMillis: 0, memoryMiB: 0, topology: {}, schedulable: true }],
      cohorts: [],
      teams: [],
      quotas: [{ team: 'vision', flavor: 'h100', nominal: 4, borrowingLimit: null, lendingLimit: null }, { team: 'nlp', flavor: 'h100', nominal: 12, borrowingLimit: null, lendingLimit: null }],
      running: [running('r1', 'vision', 2), running('victim', 'nlp', 4)],
      pending: [{ ...spec, id: 'p1', name: 'p1', team: 'vision', replicas: 1, acceleratorsPerReplica: 6, flavors: ['h100'], submittedAt: 7_500 }],
      options: DEFAULT_OPTIONS,
    };
    const result: CycleResult = {
      admissions: [{ jobId: 'p1', team: 'vision', flavor: 'h100', replicas: 1, placement: [{ replica: 0, node: 'n2', accelerators: 6, cpuMillis: 0, memoryMiB: 0 }], borrowed: 4, preempts: ['victim'] }],
      preemptions: [{ victimJobId: 'victim', victimTeam: 'nlp', preemptorJobId: 'p1', kind: 'ReclaimWithinCohort', message: 'x' }],
      reservations: [],
      pending: [],
      stats: { considered: 1, admitted: 1, preempted: 1, reserved: 0 },
    };
    const report: CycleReport = { cycle: 1, startedAt: 10_000, phasesMs: { lock: 1, snapshot: 2, schedule: 3, check: 1, commit: 4 }, totalMs: 10, result, outbox: [], snapshot, committed: true };
    metrics.onCycle(report);

    const values = async (name: string): Promise<{ labels: Record<string, string | number>; value: number }[]> =>
      (await registry.getSingleMetric(name)!.get()).values as { labels: Record<string, string | number>; value: number }[];
    const accelerators = await values('qm_accelerators');
    const find = (kind: string, team: string): number | undefined => acceleratorsOf(accelerators, kind, team);
    expect(find('total', '')).toBe(16);
    expect(find('allocated', 'vision')).toBe(8);
    expect(find('borrowed', 'vision')).toBe(4);
    expect(find('allocated', 'nlp')).toBeUndefined(); // its only job was preempted
    expect((await values('qm_scheduler_decisions_total')).find((v) => v.labels['kind'] === 'admitted')?.value).toBe(1);
    expect((await values('qm_preemptions_total'))[0]).toMatchObject({ labels: { kind: 'ReclaimWithinCohort' }, value: 1 });
    expect((await values('qm_scheduler_decisions_total')).find((v) => v.labels['kind'] === 'budget-stopped')?.value).toBe(0);
    const latency = await values('qm_admission_latency_seconds');
    expect(latency.find((v) => (v as { metricName?: string }).metricName === 'qm_admission_latency_seconds_sum')?.value).toBe(2.5);

    // A cycle that stops vision's running job (a used-up stop budget): counted, and no longer allocated.
    const stop = { jobId: 'r1', team: 'vision', flavor: 'h100', accelerators: 2, period: 'day', until: 86_400_000, lostAcceleratorSeconds: 0, lostSince: 0, gracePeriodSeconds: 0, message: 'stopped' };
    metrics.onCycle({ ...report, cycle: 2, result: { ...result, admissions: [], preemptions: [], budgetStops: [stop] } });
    expect((await values('qm_scheduler_decisions_total')).find((v) => v.labels['kind'] === 'budget-stopped')?.value).toBe(1);
    expect(acceleratorsOf(await values('qm_accelerators'), 'allocated', 'vision')).toBeUndefined();
  });
});

function acceleratorsOf(values: { labels: Record<string, string | number>; value: number }[], kind: string, team: string): number | undefined {
  return values.find((v) => v.labels['kind'] === kind && v.labels['team'] === team)?.value;
}
