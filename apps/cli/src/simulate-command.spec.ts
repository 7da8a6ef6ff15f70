import { describe, expect, it } from '@jest/globals';
import { DEFAULT_OPTIONS, runCycle } from '#core';
import { buildCluster, deriveTenancy, renderHtmlReport, simulatePolicy, type SimInput, type SimJob } from '#sim';
import { comparisonTable } from './simulate-command.js';

/**
 * One fast and one slow 8-GPU node. `blocker` holds the fast node for 950 h; `mover` (100 h on the fast
 * node, 1,000 h on the slow one) starts on the slow node and, checkpointing, moves to the fast one once it frees.
 */
function moverScenario(): SimInput {
  const flavors = [
    { name: 'fast', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 },
    { name: 'slow', kind: 'nvidia-gpu' as const, resourceName: 'nvidia.com/gpu', relativeSpeed: 0.1, costPerHour: 1 },
  ];
  const cluster = buildCluster(flavors, [
    { flavor: 'fast', count: 1, acceleratorsPerNode: 8 },
    { flavor: 'slow', count: 1, acceleratorsPerNode: 8 },
  ]);
  const job = (id: string, submitSeconds: number, work: number, rates: Record<string, number>): SimJob => ({
    id,
    line: 1,
    source: 'test',
    team: 'a',
    submitSeconds,
    replicas: 1,
    acceleratorsPerReplica: 8,
    flavors: Object.keys(rates),
    work,
    rates,
    priority: 0,
    preemptible: true,
  });
  return {
    trace: { jobs: [job('j1-blocker', 0, 950 * 3600, { fast: 1 }), job('j2-mover', 1, 3_600_000, { fast: 10, slow: 1 })], rejected: [] },
    cluster,
    tenancy: deriveTenancy(['a'], { a: 1 }, cluster),
    config: { cycleIntervalSeconds: 10, checkpointIntervalSeconds: 1800, seriesBucketSeconds: 0, options: { ...DEFAULT_OPTIONS } },
    epochMs: 0,
  };
}

describe('qm simulate summary and report: moves per policy', () => {
  const run = simulatePolicy(moverScenario(), 'full', runCycle);

  it('the comparison table has a moves column with the policy\'s moves', () => {
    expect(run.metrics.overall.moves).toBe(1);
    const [head, , row] = comparisonTable([run]).split('\n');
    const headers = head!.trim().split(/\s{2,}/);
    const cells = row!.trim().split(/\s{2,}/);
    expect(headers).toContain('moves');
    expect(cells[headers.indexOf('moves')]).toBe('1');
    expect(cells[headers.indexOf('preempt')]).toBe('0');
  });

  it('the HTML report shows moves in the policy table and the policy summary', () => {
    const html = renderHtmlReport('t', [run]);
    const head = [...html.matchAll(/<th>([^<]*)<\/th>/g)].map((m) => m[1]);
    expect(head).toContain('moves');
    expect(html).toContain('0 preemptions and 1 moves to faster flavors');
    const firstRow = html.match(/<tbody><tr>(.*?)<\/tr>/)![1]!;
    const cells = [...firstRow.matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells[head.indexOf('moves')]).toBe('1');
  });
});
