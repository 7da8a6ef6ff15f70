import { DEFAULT_OPTIONS, type SchedulerOptions } from '#core';

/**
 * Scheduling policies the simulator compares, all run by the same core with different options:
 * - `full`: ours — backfill behind reservations, preemption (reclaim and priority), relative-speed placement.
 * - `fastest-free`: `full` with the previous placement (the fastest flavor that fits now).
 * - `fifo`: no backfill, no preemption.
 * - `one-per-queue`: at most one admission per team per cycle (like Kueue's one head per queue).
 * - `hetero-agnostic`: flavors chosen at random (seeded) instead of by the job's speed on each.
 * - `no-preemption`: `full` without preemption.
 * - `no-reservation`: backfill with no reservation at all (small jobs may pass a waiting large gang forever).
 */
export const POLICY_NAMES = ['full', 'fastest-free', 'fifo', 'one-per-queue', 'hetero-agnostic', 'no-preemption', 'no-reservation'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export function isPolicyName(name: string): name is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(name);
}

export function policyOptions(name: PolicyName, base: SchedulerOptions = DEFAULT_OPTIONS, seed = 1): SchedulerOptions {
  switch (name) {
    case 'full':
      return { ...base };
    case 'fastest-free':
      return { ...base, flavorPlacement: 'fastest-free' };
    case 'fifo':
      return { ...base, backfill: false, preemption: false };
    case 'one-per-queue':
      return { ...base, maxAdmissionsPerTeamPerCycle: 1 };
    case 'hetero-agnostic':
      return { ...base, flavorSelectionOverride: 'random', seed };
    case 'no-preemption':
      return { ...base, preemption: false };
    case 'no-reservation':
      return { ...base, reservationDepth: 0 };
    default: {
      const never: never = name;
      throw new Error(`unknown policy ${String(never)}`);
    }
  }
}
