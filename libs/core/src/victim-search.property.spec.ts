/**
 * The victim order, checked against an independent oracle (DESIGN.md rule 5; victim-search.ts).
 *
 * Small random clusters (2–4 nodes of 4 or 8 accelerators in two zones) run gangs of different sizes,
 * priorities, ages and checkpoints; one job of a higher priority waits. The oracle enumerates every set of
 * the victims the policies allow, keeps the sets with which the job fits (its own arithmetic of quota,
 * borrowing and node slots, sharing no code with the core) and ranks them: the lowest highest priority,
 * then no gang of more than 8 × the shortfall when possible, then the least lost work
 * (accelerators × time since the last checkpoint or admission), then the fewest accelerators freed. The
 * core's choice must rank first: no sufficient set loses less work.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MINUTE, T0, makeJob, makeNode, makeQuota, makeTeam, snapshot } from '#testing';
import { runCycle } from './cycle.js';
import type { RunningJob, Snapshot } from './model.js';

const FLAVOR = 'h100-80gb';

interface Gang {
  replicas: number;
  perReplica: number;
  priority: number;
  ageMinutes: number;
  /** Minutes since its reported checkpoint, if it checkpoints. */
  checkpointMinutesAgo: number | null;
  borrower: boolean;
}

interface World {
  nodeSizes: number[];
  gangs: Gang[];
  job: { replicas: number; perReplica: number; zone: boolean };
  /** Reclaim mode: team `lender` (the job's) and `borrower` share a cohort; else one team without one. */
  reclaim: boolean;
  /** Within mode: the team's nominal as a fraction of the cluster (quota may be what is short). */
  nominalShare: number;
  /** Reclaim mode: the lender's nominal, as a fraction of the cluster. */
  lenderShare: number;
  placementSeed: number;
}

const arbGang: fc.Arbitrary<Gang> = fc.record({
  replicas: fc.integer({ min: 1, max: 2 }),
  perReplica: fc.constantFrom(1, 2, 4, 8),
  priority: fc.constantFrom(0, 1, 5),
  ageMinutes: fc.integer({ min: 20, max: 600 }),
  checkpointMinutesAgo: fc.option(fc.integer({ min: 0, max: 19 }), { nil: null }),
  borrower: fc.boolean(),
});

const arbWorld: fc.Arbitrary<World> = fc.record({
  nodeSizes: fc.array(fc.constantFrom(4, 8), { minLength: 2, maxLength: 4 }),
  gangs: fc.array(arbGang, { minLength: 1, maxLength: 8 }),
  job: fc.record({ replicas: fc.integer({ min: 1, max: 2 }), perReplica: fc.constantFrom(1, 2, 4, 8), zone: fc.boolean() }),
  reclaim: fc.boolean(),
  nominalShare: fc.constantFrom(0.5, 0.75, 1),
  lenderShare: fc.constantFrom(0.25, 0.5, 0.75),
  placementSeed: fc.integer({ min: 0, max: 1000 }),
});

interface Placed {
  id: string;
  team: string;
  priority: number;
  acc: number;
  /** Accelerators per node index. */
  on: Map<number, number>;
  /** Accelerator-ms lost if preempted now. */
  lost: number;
}

/** Places the gangs first-fit from a seeded node order; a gang that does not fit whole is left out. */
function place(w: World): { placed: Placed[]; running: RunningJob[] } {
  const free = [...w.nodeSizes];
  const placed: Placed[] = [];
  const running: RunningJob[] = [];
  w.gangs.forEach((g, gi) => {
    const order = free.map((_, i) => i).sort((a, b) => ((a * 7 + w.placementSeed + gi) % free.length) - ((b * 7 + w.placementSeed + gi) % free.length) || a - b);
    const trial = [...free];
    const nodes: number[] = [];
    for (let r = 0; r < g.replicas; r++) {
      const n = order.find((i) => trial[i]! >= g.perReplica);
      if (n === undefined) return;
      trial[n] = trial[n]! - g.perReplica;
      nodes.push(n);
    }
    free.splice(0, free.length, ...trial);
    const id = `g${gi}`;
    const team = w.reclaim && g.borrower ? 'borrower' : w.reclaim ? 'lender' : 'vision';
    const admitted = T0 - g.ageMinutes * MINUTE;
    let b = makeJob(id)
      .team(team)
      .priority(g.priority)
      .replicas(g.replicas)
      .accelerators(g.perReplica)
      .admittedAt(admitted)
      .runsOn(...nodes.map((n) => `n${n}`));
    const checkpointAt = g.checkpointMinutesAgo === null ? admitted : T0 - g.checkpointMinutesAgo * MINUTE;
    // An interval longer than any age: the last checkpoint is the reported one, or admission.
    if (g.checkpointMinutesAgo !== null) b = b.checkpoint(86_400).checkpointedAt(checkpointAt);
    const on = new Map<number, number>();
    for (const n of nodes) on.set(n, (on.get(n) ?? 0) + g.perReplica);
    const acc = g.replicas * g.perReplica;
    placed.push({ id, team, priority: g.priority, acc, on, lost: acc * (T0 - checkpointAt) });
    running.push(b.buildRunning());
  });
  return { placed, running };
}

const total = (w: World): number => w.nodeSizes.reduce((s, n) => s + n, 0);
const zoneOf = (i: number): string => `z${i % 2}`;

function build(w: World, running: RunningJob[]): Snapshot {
  const cluster = total(w);
  const nodes = w.nodeSizes.map((size, i) => makeNode(`n${i}`).accelerators(size).zone(zoneOf(i)));
  const job = makeJob('job')
    .team(w.reclaim ? 'lender' : 'vision')
    .priority(10)
    .replicas(w.job.replicas)
    .accelerators(w.job.perReplica)
    .topology(w.job.zone ? 'zone' : 'none');
  const b = snapshot()
    .nodes(...nodes)
    .running(...running)
    .pending(job)
    .options({ minRuntimeBeforePreemptionSeconds: 0 });
  if (!w.reclaim) {
    return b
      .teams(makeTeam('vision').withinTeam('LowerPriority'))
      .quotas(makeQuota('vision', FLAVOR).nominal(Math.round(cluster * w.nominalShare)))
      .build();
  }
  const lender = Math.round(cluster * w.lenderShare);
  return b
    .teams(makeTeam('lender').cohort('c').withinTeam('LowerPriority').reclaim('Any'), makeTeam('borrower').cohort('c').withinTeam('Never'))
    .quotas(makeQuota('lender', FLAVOR).nominal(lender), makeQuota('borrower', FLAVOR).nominal(cluster - lender))
    .build();
}

interface Verdict {
  sufficient: boolean;
  maxPriority: number;
  oversized: boolean;
  lost: number;
  acc: number;
}

/** The oracle: every set of allowed victims, judged by its own arithmetic. */
function oracle(w: World, placed: Placed[]): { fitsNow: boolean; best: Verdict | undefined; judge: (ids: string[]) => Verdict } {
  const cluster = total(w);
  const need = w.job.replicas * w.job.perReplica;
  const jobTeam = w.reclaim ? 'lender' : 'vision';
  const used = (team: string, without: Set<string>): number => placed.filter((p) => p.team === team && !without.has(p.id)).reduce((s, p) => s + p.acc, 0);
  const lenderNominal = Math.round(cluster * w.lenderShare);
  const borrowerNominal = cluster - lenderNominal;
  const borrowed = used('borrower', new Set()) - borrowerNominal;
  // Reclaim is allowed only when the lender stays within its nominal with the job admitted.
  const reclaimAllowed = w.reclaim && used('lender', new Set()) + need <= lenderNominal && borrowed > 0;
  const allowed = placed.filter((p) => (p.team === jobTeam ? p.priority < 10 : reclaimAllowed));

  const quotaRoom = (without: Set<string>): number => {
    if (!w.reclaim) return Math.round(cluster * w.nominalShare) - used('vision', without);
    // Cohort of two teams with no limits set: the job's team may add what the cohort's nominal leaves idle.
    return cluster - used('lender', without) - used('borrower', without);
  };
  const slots = (without: Set<string>): boolean => {
    const free = [...w.nodeSizes];
    for (const p of placed) if (!without.has(p.id)) for (const [n, a] of p.on) free[n] = free[n]! - a;
    const count = (nodes: number[]): number => nodes.reduce((s, n) => s + Math.floor(Math.max(0, free[n]!) / w.job.perReplica), 0);
    const all = w.nodeSizes.map((_, i) => i);
    if (!w.job.zone) return count(all) >= w.job.replicas;
    return ['z0', 'z1'].some((z) => count(all.filter((i) => zoneOf(i) === z)) >= w.job.replicas);
  };
  const freeIn = (nodes: number[]): number => {
    const free = [...w.nodeSizes];
    for (const p of placed) for (const [n, a] of p.on) free[n] = free[n]! - a;
    return nodes.reduce((s, n) => s + Math.max(0, free[n]!), 0);
  };
  const all = w.nodeSizes.map((_, i) => i);
  const bestFree = w.job.zone ? Math.max(...['z0', 'z1'].map((z) => freeIn(all.filter((i) => zoneOf(i) === z)))) : freeIn(all);
  const shortfall = Math.max(1, need - bestFree, need - quotaRoom(new Set()));

  const judge = (ids: string[]): Verdict => {
    const set = new Set(ids);
    const victims = placed.filter((p) => set.has(p.id));
    const fromBorrower = victims.filter((p) => p.team === 'borrower');
    const validBorrowing =
      fromBorrower.length === 0 ||
      fromBorrower.reduce((s, p) => s + p.acc, 0) - Math.max(...fromBorrower.map((p) => p.acc)) < borrowed;
    const withinNominal = fromBorrower.length === 0 || used('lender', set) + need <= lenderNominal;
    return {
      sufficient: validBorrowing && withinNominal && quotaRoom(set) >= need && slots(set),
      maxPriority: Math.max(-Infinity, ...victims.map((p) => p.priority)),
      oversized: victims.some((p) => p.acc > 8 * shortfall),
      lost: victims.reduce((s, p) => s + p.lost, 0),
      acc: victims.reduce((s, p) => s + p.acc, 0),
    };
  };

  const sufficient: Verdict[] = [];
  for (let mask = 1; mask < 1 << allowed.length; mask++) {
    const v = judge(allowed.filter((_, i) => (mask & (1 << i)) !== 0).map((p) => p.id));
    if (v.sufficient) sufficient.push(v);
  }
  const rank = (x: Verdict, y: Verdict): number => x.maxPriority - y.maxPriority;
  sufficient.sort(rank);
  const tier = sufficient.filter((v) => v.maxPriority === sufficient[0]?.maxPriority);
  const small = tier.filter((v) => !v.oversized);
  const pool = small.length > 0 ? small : tier;
  const best = [...pool].sort((x, y) => x.lost - y.lost || x.acc - y.acc)[0];
  return { fitsNow: judge([]).sufficient, best, judge };
}

describe('the victim set (checked against an oracle that enumerates every set)', () => {
  it('is sufficient, of the lowest priorities, without oversized gangs when it can be, and loses the least work', () => {
    fc.assert(
      fc.property(arbWorld, (w) => {
        const { placed, running } = place(w);
        const r = runCycle(build(w, running));
        const o = oracle(w, placed);
        const admitted = r.admissions.find((a) => a.jobId === 'job');
        if (o.fitsNow) {
          expect(admitted).toBeDefined();
          expect(r.preemptions).toEqual([]);
          return;
        }
        if (o.best === undefined) {
          expect(admitted).toBeUndefined();
          expect(r.preemptions).toEqual([]);
          return;
        }
        expect(admitted).toBeDefined();
        const chosen = o.judge(admitted!.preempts);
        expect(chosen.sufficient).toBe(true);
        expect({ maxPriority: chosen.maxPriority, oversized: chosen.oversized, lost: chosen.lost, acc: chosen.acc }).toEqual({
          maxPriority: o.best.maxPriority,
          oversized: o.best.oversized,
          lost: o.best.lost,
          acc: o.best.acc,
        });
      }),
      { numRuns: 400 },
    );
  });
});
