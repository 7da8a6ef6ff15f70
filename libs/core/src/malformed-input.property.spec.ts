/**
 * Property: malformed pending jobs (bad counts, NaN/∞, unknown team or topology, duplicate ids …) never
 * make a cycle throw, are never admitted, are reported INVALID, and do not disturb the rules or the
 * determinism of the decisions about the other jobs.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  arbCorruptions,
  arbScenario,
  makeJob,
  makeNode,
  makeQuota,
  playedWorld,
  shuffleWithSeed,
  snapshot,
  type JobCorruption,
} from '#testing';
import { runCycle } from './cycle.js';
import { checkInvariants, formatViolations } from './invariants.js';
import type { PendingJob, Snapshot } from './model.js';

/** The world with some pending jobs corrupted; returns the ids that must come out INVALID. */
function corrupt(world: Snapshot, corruptions: { pick: number; corruption: JobCorruption }[]): { snapshot: Snapshot; bad: Set<string>; duplicated: Set<string> } {
  const pending = [...world.pending];
  const bad = new Set<string>();
  const duplicated = new Set<string>();
  for (const { pick, corruption } of corruptions) {
    if (pending.length < 2) break;
    const i = pick % pending.length;
    const job = pending[i]!;
    if (bad.has(job.id) || duplicated.has(job.id)) continue;
    if ('duplicate' in corruption) {
      const other = pending[(i + 1) % pending.length]!;
      if (bad.has(other.id) || duplicated.has(other.id)) continue;
      pending[i] = { ...job, id: other.id };
      duplicated.add(other.id);
    } else {
      pending[i] = { ...job, ...corruption.patch };
      bad.add(job.id);
    }
  }
  return { snapshot: { ...world, pending }, bad, duplicated };
}

describe('malformed pending jobs', () => {
  it('never throw, are never admitted, come out INVALID, and leave the other decisions lawful', () => {
    fc.assert(
      fc.property(arbScenario(), arbCorruptions(), (scenario, corruptions) => {
        const { snapshot, bad, duplicated } = corrupt(playedWorld(scenario, runCycle), corruptions);
        const result = runCycle(snapshot);
        for (const a of result.admissions) expect(bad.has(a.jobId)).toBe(false);
        for (const r of result.pending) if (bad.has(r.jobId)) expect([r.jobId, r.code]).toEqual([r.jobId, 'INVALID']);
        // A duplicated id: one of its jobs is reported INVALID as a duplicate, and it is admitted at most once.
        for (const id of duplicated) {
          expect(result.pending.filter((r) => r.jobId === id && r.code === 'INVALID' && r.message.includes('duplicate'))).toHaveLength(1);
          expect(result.admissions.filter((a) => a.jobId === id).length).toBeLessThanOrEqual(1);
        }
        if (duplicated.size === 0) {
          const violations = checkInvariants(snapshot, result);
          if (violations.length > 0) throw new Error(formatViolations(violations));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('do not break determinism: shuffled input lists give the identical result', () => {
    fc.assert(
      fc.property(arbScenario(), arbCorruptions(), fc.nat(), (scenario, corruptions, seed) => {
        const { snapshot } = corrupt(playedWorld(scenario, runCycle), corruptions);
        const want = runCycle(snapshot);
        const shuffled = { ...snapshot, pending: shuffleWithSeed(snapshot.pending, seed), running: shuffleWithSeed(snapshot.running, seed + 1) };
        expect(runCycle(shuffled)).toEqual(want);
      }),
      { numRuns: 150 },
    );
  });

  it('two jobs with one id are resolved independently of input order (KNOWN-FAILURES 3)', () => {
    const small = makeJob('dup').team('team-a').accelerators(1).build();
    const big = makeJob('dup').team('team-a').accelerators(8).build();
    const world = (...pending: PendingJob[]): Snapshot =>
      snapshot().nodes(makeNode('n-0').accelerators(8)).quotas(makeQuota('team-a', 'h100-80gb').nominal(8)).pending(...pending).build();
    expect(runCycle(world(big, small))).toEqual(runCycle(world(small, big)));
  });
});
