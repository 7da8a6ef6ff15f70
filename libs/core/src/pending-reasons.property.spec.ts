/**
 * Property: the reason a job is left pending is true (rule 7's "why is it pending" must not mislead).
 * Checked on random worlds driven through cycles, for jobs whose reason concerns one flavor and no
 * topology (so the figure can be recomputed independently of the core):
 *
 * - NO_QUOTA               ⇒ the team has no quota row for the flavor.
 * - INSUFFICIENT_CAPACITY  ⇒ the job's minimum gang does not fit the capacity left after the cycle,
 *                            counted conservatively (victims still in place, admissions added), per
 *                            node over accelerators, CPU and memory.
 * - UNSATISFIABLE          ⇒ the job could not fit an empty fleet of that flavor, or its quota ceiling
 *                            (nominal + borrowing limit, capped by what the cohort could ever lend; the
 *                            nominal alone for a job that may not be preempted, which never borrows), or
 *                            its minimum's CPU or memory exceeds the team's cap.
 * - QUOTA_EXCEEDED         ⇒ the minimum gang does not fit the team's guaranteed (never lent) quota
 *                            next to its usage after the cycle (victims counted), or its CPU or memory cap.
 */
import { describe, it } from '@jest/globals';
import fc from 'fast-check';
import { applyCycleResult, applyEvent, arbContendedScenario, arbScenario, initialSnapshot, type IdSource, type Scenario } from '#testing';
import { runCycle } from './cycle.js';
import type { ClusterNode, CycleResult, PendingJob, Snapshot } from './model.js';

/** Replicas of `job` that fit on `node` given what is already used there. */
function slots(node: ClusterNode, used: { a: number; c: number; m: number }, job: PendingJob): number {
  const ext = node.external ?? { accelerators: 0, cpuMillis: 0, memoryMiB: 0 };
  const by = (free: number, per: number): number => (per <= 0 ? Infinity : Math.floor(Math.max(0, free) / per));
  return Math.min(
    by(node.accelerators - ext.accelerators - used.a, job.acceleratorsPerReplica),
    by(node.cpuMillis - ext.cpuMillis - used.c, job.cpuMillisPerReplica),
    by(node.memoryMiB - ext.memoryMiB - used.m, job.memoryMiBPerReplica),
  );
}

/** Most the team could ever hold of the flavor under its quota (DESIGN: nominal + borrowing, cohort pool). */
function quotaCeiling(s: Snapshot, team: string, flavor: string): number {
  const t = s.teams.find((x) => x.name === team);
  const q = s.quotas.find((x) => x.team === team && x.flavor === flavor);
  if (!t || !q) return 0;
  if (t.cohort === null) return q.nominal;
  const lendable = (nominal: number, limit: number | null): number => Math.min(limit ?? nominal, nominal);
  let pool = 0;
  for (const m of s.teams) {
    if (m.cohort !== t.cohort) continue;
    const mq = s.quotas.find((x) => x.team === m.name && x.flavor === flavor);
    if (mq) pool += lendable(mq.nominal, mq.lendingLimit);
  }
  const guaranteed = q.nominal - lendable(q.nominal, q.lendingLimit);
  return Math.min(q.nominal + (q.borrowingLimit ?? Infinity), guaranteed + pool);
}

/** A false reason in this cycle, or null. */
function falseReason(s: Snapshot, result: CycleResult): string | null {
  const jobs = new Map(s.pending.map((j) => [j.id, j]));
  // Conservative usage after the cycle: every running job still in place (victims too) plus admissions.
  const used = new Map<string, { a: number; c: number; m: number }>();
  const charge = (p: { node: string; accelerators: number; cpuMillis: number; memoryMiB: number }): void => {
    const u = used.get(p.node) ?? { a: 0, c: 0, m: 0 };
    used.set(p.node, { a: u.a + p.accelerators, c: u.c + p.cpuMillis, m: u.m + p.memoryMiB });
  };
  for (const j of s.running) j.placement.forEach(charge);
  for (const a of result.admissions) a.placement.forEach(charge);
  const zero = { a: 0, c: 0, m: 0 };

  for (const r of result.pending) {
    const job = jobs.get(r.jobId);
    if (!job || job.flavors.length !== 1 || job.topology.level !== 'none' || job.topology.tpuShape !== undefined) continue;
    const flavor = job.flavors[0]!;
    if (!s.flavors.some((f) => f.name === flavor) || !s.teams.some((t) => t.name === job.team)) continue;
    const nodes = s.nodes.filter((n) => n.flavor === flavor && n.schedulable);
    const hasQuota = s.quotas.some((q) => q.team === job.team && q.flavor === flavor);
    const label = `${job.id} (${job.team}, ${job.minReplicas}–${job.replicas} × ${job.acceleratorsPerReplica} ${flavor})`;
    switch (r.code) {
      case 'NO_QUOTA':
        if (hasQuota) return `${label} is NO_QUOTA but team ${job.team} has a ${flavor} quota: ${r.message}`;
        break;
      case 'INSUFFICIENT_CAPACITY': {
        const room = nodes.reduce((sum, n) => sum + slots(n, used.get(n.name) ?? zero, job), 0);
        if (room >= job.minReplicas) return `${label} is INSUFFICIENT_CAPACITY but ${room} replicas fit after the cycle: ${r.message}`;
        break;
      }
      case 'UNSATISFIABLE': {
        const empty = nodes.reduce((sum, n) => sum + slots(n, zero, job), 0);
        const need = job.minReplicas * job.acceleratorsPerReplica;
        const ceiling = Math.min(quotaCeiling(s, job.team, flavor), job.preemptible ? Infinity : (s.quotas.find((x) => x.team === job.team && x.flavor === flavor)?.nominal ?? 0));
        const q = s.quotas.find((x) => x.team === job.team && x.flavor === flavor);
        const overCap = q !== undefined && ((q.cpuMillisLimit ?? Infinity) < job.minReplicas * job.cpuMillisPerReplica || (q.memoryMiBLimit ?? Infinity) < job.minReplicas * job.memoryMiBPerReplica);
        if (hasQuota && empty >= job.minReplicas && need <= ceiling && !overCap) {
          return `${label} is UNSATISFIABLE but an empty fleet holds ${empty} replicas and the quota ceiling is ${ceiling}: ${r.message}`;
        }
        break;
      }
      case 'QUOTA_EXCEEDED': {
        // Certainly allowed: within the guaranteed (never lent) part, or within nominal without a cohort.
        const q = s.quotas.find((x) => x.team === job.team && x.flavor === flavor);
        const team = s.teams.find((t) => t.name === job.team)!;
        if (!q) break;
        const teamUsed = s.running.filter((j) => j.team === job.team && j.flavor === flavor).reduce((n, j) => n + j.placement.reduce((m, p) => m + p.accelerators, 0), 0) +
          result.admissions.filter((a) => a.team === job.team && a.flavor === flavor).reduce((n, a) => n + a.placement.reduce((m, p) => m + p.accelerators, 0), 0);
        const guaranteed = team.cohort === null ? q.nominal : q.nominal - Math.min(q.lendingLimit ?? q.nominal, q.nominal);
        const need = job.minReplicas * job.acceleratorsPerReplica;
        // Or over its CPU or memory cap next to what its team holds after the cycle (victims counted).
        const held = [...s.running.filter((j) => j.team === job.team && j.flavor === flavor), ...result.admissions.filter((a) => a.team === job.team && a.flavor === flavor)].flatMap((j) => j.placement);
        const overCap =
          (q.cpuMillisLimit ?? Infinity) < held.reduce((n, p) => n + p.cpuMillis, 0) + job.minReplicas * job.cpuMillisPerReplica ||
          (q.memoryMiBLimit ?? Infinity) < held.reduce((n, p) => n + p.memoryMiB, 0) + job.minReplicas * job.memoryMiBPerReplica;
        if (teamUsed + need <= guaranteed && !overCap) {
          return `${label} is QUOTA_EXCEEDED but team ${job.team} uses at most ${teamUsed} with ${guaranteed} guaranteed: ${r.message}`;
        }
        break;
      }
      case 'BUDGET_EXHAUSTED':
        if (!(s.budgetBlocks ?? []).some((b) => b.team === job.team)) return `${label} is BUDGET_EXHAUSTED but its team has no budget block: ${r.message}`;
        break;
      case 'HELD':
        // The apps set it on a held job, which is never in a snapshot.
        return `${label} is HELD, which a cycle never decides: ${r.message}`;
      case 'ADMISSION_LIMIT':
      case 'BLOCKED_BY_RESERVATION':
      case 'COHORT_EXHAUSTED':
      case 'INVALID':
      case 'TOPOLOGY_UNSATISFIABLE':
        break;
    }
  }
  return null;
}

function play(scenario: Scenario): string | null {
  const ids: IdSource = { next: 0 };
  let s = initialSnapshot(scenario);
  for (const [i, event] of scenario.events.entries()) {
    s = applyEvent(s, event, ids);
    const result = runCycle(s);
    const wrong = falseReason(s, result);
    if (wrong !== null) return `cycle ${i + 1} (after ${event.type}): ${wrong}`;
    s = applyCycleResult(s, result);
  }
  return null;
}

describe('pending reasons are true', () => {
  it.each([
    ['random worlds', arbScenario(), 150],
    ['contended worlds', arbContendedScenario(), 150],
  ] as const)('in %s', (_name, arb, numRuns) => {
    fc.assert(
      fc.property(arb, (scenario) => {
        const wrong = play(scenario);
        if (wrong !== null) throw new Error(wrong);
      }),
      { numRuns },
    );
  });
});
