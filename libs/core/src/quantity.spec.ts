import { describe, expect, it } from '@jest/globals';
import { UNLIMITED, addAmount, fromLimit, minAmount, replicasWithin, subAmount } from './amount.js';
import type { ClusterState } from './cluster-state.js';
import type { ClusterNode, Quota } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB } from './quantity.js';

/**
 * The units are compile-time only: each `@ts-expect-error` below is a mix-up the compiler must refuse
 * (`npm run typecheck` fails with "Unused '@ts-expect-error' directive" the day a unit stops being checked).
 * The function is never called; the runtime cases check that the helpers are plain arithmetic.
 */
export function unitsAreKeptApart(node: ClusterNode, quota: Quota, cluster: ClusterState): void {
  const gpus: Accelerators = node.accelerators;
  const cpu: CpuMillis = node.cpuMillis;
  const memory: MemoryMiB = node.memoryMiB;
  // @ts-expect-error — CPU millicores in an accelerator field.
  const wrongField: Accelerators = node.cpuMillis;
  // @ts-expect-error — memory as a quota (quotas count accelerators).
  const wrongQuota: Quota = { ...quota, nominal: memory };
  // @ts-expect-error — operands of two units.
  addAmount(gpus, cpu);
  // @ts-expect-error — a CPU remainder kept as accelerators.
  const wrongResult: Accelerators = subAmount(cpu, 1000);
  // @ts-expect-error — a replica's figures in the wrong places.
  cluster.take(0, { a: cpu, c: gpus, m: memory });
  // @ts-expect-error — free memory compared as replicas of accelerators.
  replicasWithin(cluster.freeM(0), gpus, 4);
  // Plain numbers (literals, parsed rows) are any unit, and every unit is a number.
  const literal: Accelerators = 8;
  const sum: number = gpus + literal;
  void [wrongField, wrongQuota, wrongResult, sum];
}

describe('quantities', () => {
  it('are plain numbers at run time: the helpers saturate at UNLIMITED and never go below zero', () => {
    const eight: Accelerators = 8;
    expect(addAmount(eight, 4)).toBe(12);
    expect(addAmount(eight, UNLIMITED)).toBe(UNLIMITED);
    expect(subAmount(eight, 12)).toBe(0);
    expect(subAmount(UNLIMITED, 12)).toBe(UNLIMITED);
    expect(minAmount(eight, 3)).toBe(3);
    expect(fromLimit<'accelerators'>(null)).toBe(UNLIMITED);
    expect(replicasWithin(eight, 3, 10)).toBe(2);
    expect(replicasWithin(UNLIMITED, 3, 10)).toBe(10);
    expect(typeof eight).toBe('number');
  });
});
