/**
 * Property tests of the scheduling core (DESIGN.md, "Rules the scheduler never breaks").
 *
 * 1–5, 7: random clusters, tenancies and event sequences drive repeated cycles; after every cycle the
 *         result is checked with checkInvariants, then applied to the world (cycle-driver.ts).
 * 7:      determinism — the same world with every input list shuffled gives the identical result, and
 *         runCycle does not modify its input.
 * 6:      a large gang at the head of the queue (optionally bound to one zone, with or without preemption
 *         of the small jobs) keeps a reservation whose
 *         start never moves later while only smaller, lower-priority jobs of two teams arrive and running
 *         jobs end exactly when they said they would; it starts at the first cycle at or after that time.
 *
 * On failure fast-check prints the seed, the path and the shrunk counterexample; re-run one case with
 * `fc.assert(..., { seed, path, endOnFailure: true })`.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  applyCycleResult,
  applyEvent,
  arbContendedScenario,
  arbScenario,
  finishDueJobs,
  initialSnapshot,
  playedWorld,
  shuffleWithSeed,
  WORLD_START,
  HOUR,
  T0,
  makeJob,
  makeNode,
  makeQuota,
  makeTeam,
  snapshot,
  type IdSource,
  type Scenario,
} from '#testing';
import { runCycle } from './cycle.js';
import { checkInvariants, formatViolations } from './invariants.js';
import { DEFAULT_OPTIONS, type ClusterNode, type CycleResult, type PendingJob, type RunningJob, type Snapshot } from './model.js';

/** Plays a scenario: event, cycle, check, apply — returns the first broken cycle's report, or null. */
function playAndCheck(scenario: Scenario): string | null {
  const ids: IdSource = { next: 0 };
  const preemptedBy = new Map<string, string>();
  let s = initialSnapshot(scenario);
  for (const [i, event] of scenario.events.entries()) {
    s = applyEvent(s, event, ids);
    const result = runCycle(s);
    const violations = checkInvariants(s, result, { preemptedBy });
    if (violations.length > 0) return `cycle ${i + 1} (after ${event.type}):\n${formatViolations(violations)}`;
    for (const p of result.preemptions) preemptedBy.set(p.victimJobId, p.preemptorJobId);
    s = applyCycleResult(s, result);
  }
  return null;
}

function shuffled(s: Snapshot, seed: number): Snapshot {
  return {
    ...s,
    flavors: shuffleWithSeed(s.flavors, seed),
    nodes: shuffleWithSeed(s.nodes, seed + 1),
    cohorts: shuffleWithSeed(s.cohorts, seed + 2),
    teams: shuffleWithSeed(s.teams, seed + 3),
    quotas: shuffleWithSeed(s.quotas, seed + 4),
    running: shuffleWithSeed(s.running, seed + 5),
    pending: shuffleWithSeed(s.pending, seed + 6),
  };
}

/** Multiplies every numRuns; raise it locally for a deeper search (the default keeps the file well under 30 s). */
const SCALE = 1;

describe('scheduler properties', () => {
  it('rules 1–5 and 7 hold after every cycle of random event sequences', () => {
    fc.assert(
      fc.property(arbScenario(), (scenario) => {
        const broken = playAndCheck(scenario);
        if (broken !== null) throw new Error(broken);
      }),
      { numRuns: 200 * SCALE },
    );
  });

  it('rules 1–5 and 7 hold on bigger clusters with longer histories', () => {
    fc.assert(
      fc.property(arbScenario({ maxNodes: 48, maxTeams: 8, maxCohorts: 3 }, 30), (scenario) => {
        const broken = playAndCheck(scenario);
        if (broken !== null) throw new Error(broken);
      }),
      { numRuns: 60 * SCALE },
    );
  });

  it('rules 1–5 and 7 hold in contended worlds where preemption and reclaim happen', () => {
    fc.assert(
      fc.property(arbContendedScenario(), (scenario) => {
        const broken = playAndCheck(scenario);
        if (broken !== null) throw new Error(broken);
      }),
      { numRuns: 250 * SCALE },
    );
  });

  it('rule 7: shuffled input lists give the identical result, and the input is not modified', () => {
    fc.assert(
      fc.property(arbScenario(), fc.nat(), (scenario, seed) => {
        const world = playedWorld(scenario, runCycle);
        const before = JSON.stringify(world);
        const want = runCycle(world);
        expect(JSON.stringify(world)).toBe(before);
        expect(runCycle(shuffled(world, seed))).toEqual(want);
      }),
      { numRuns: 100 * SCALE },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Rule 6: reservations for a large gang at the head of the queue
// ---------------------------------------------------------------------------------------------

interface ReservationCase {
  nodes: number;
  /** Per node: the running jobs on it as [accelerators, remaining seconds] (at most 8 accelerators). */
  load: [number, number][][];
  gangReplicas: number;
  /** `zone`: the gang must fit in one zone (nodes alternate between two zones). */
  gangTopology: 'none' | 'zone';
  /** With preemption on, the gang may also start earlier by preempting lower-priority work. */
  preemption: boolean;
  reservationDepth: number;
  steps: { advance: number; arrivals: { team: string; accelerators: number; priority: number; runtime: number }[] }[];
}

const arbReservationCase: fc.Arbitrary<ReservationCase> = fc.integer({ min: 3, max: 8 }).chain((nodes) =>
  fc.record({
    nodes: fc.constant(nodes),
    load: fc.array(
      fc.oneof(
        fc.tuple(fc.constant(8), fc.integer({ min: 1, max: 24 }).map((n) => n * 300)).map((j) => [j]),
        fc.tuple(
          fc.tuple(fc.constant(4), fc.integer({ min: 1, max: 24 }).map((n) => n * 300)),
          fc.tuple(fc.constantFrom(2, 4), fc.integer({ min: 1, max: 24 }).map((n) => n * 300)),
        ).map(([a, b]) => [a, b]),
      ),
      { minLength: nodes, maxLength: nodes },
    ),
    gangReplicas: fc.integer({ min: 2, max: nodes }),
    gangTopology: fc.constantFrom('none' as const, 'zone' as const),
    preemption: fc.boolean(),
    reservationDepth: fc.integer({ min: 1, max: 4 }),
    steps: fc.array(
      fc.record({
        advance: fc.constantFrom(60, 300, 900, 1800),
        arrivals: fc.array(
          fc.record({
            team: fc.constantFrom('team-a', 'team-b'),
            accelerators: fc.constantFrom(1, 2, 4),
            priority: fc.constantFrom(0, 10, 50),
            runtime: fc.constantFrom(60, 600, 1800, 3600, 14_400),
          }),
          { maxLength: 4 },
        ),
      }),
      { minLength: 1, maxLength: 16 },
    ),
  }),
);

function reservationWorld(c: ReservationCase): Snapshot {
  const now = WORLD_START;
  const nodes: ClusterNode[] = Array.from({ length: c.nodes }, (_, i) => ({
    name: `node-${i}`,
    flavor: 'h100',
    accelerators: 8,
    cpuMillis: 64_000,
    memoryMiB: 524_288,
    topology: { zone: `z${i % 2}` },
    schedulable: true,
  }));
  const running: RunningJob[] = c.load.flatMap((jobs, n) =>
    jobs.map(([acc, remaining], k): RunningJob => ({
      ...job(`run-${n}-${k}`, acc, 0, remaining + 60, now - 7_200_000),
      // With preemption on, the initial load cannot be preempted (else the gang would just take it):
      // only the small jobs that arrive later are fair game.
      preemptible: !c.preemption,
      flavor: 'h100',
      admittedAt: now - 60_000,
      placement: [{ replica: 0, node: `node-${n}`, accelerators: acc, cpuMillis: 1000, memoryMiB: 1024 }],
    })),
  );
  // A zone-bound gang asks at most for the nodes of zone z0 (every other node).
  const replicas = c.gangTopology === 'zone' ? Math.min(c.gangReplicas, Math.ceil(c.nodes / 2)) : c.gangReplicas;
  const gang: PendingJob = { ...job('big-gang', 8, 100, 3600, now - 1000), replicas, minReplicas: replicas, topology: { level: c.gangTopology } };
  return {
    now,
    flavors: [{ name: 'h100', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 4 }],
    nodes,
    cohorts: [],
    teams: ['team-a', 'team-b'].map((name) => ({ name, cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'LowerPriority' as const, reclaimWithinCohort: 'Never' as const } })),
    quotas: ['team-a', 'team-b'].map((team) => ({ team, flavor: 'h100', nominal: 1000, borrowingLimit: null, lendingLimit: null })),
    running,
    pending: [gang],
    options: { ...DEFAULT_OPTIONS, preemption: c.preemption, backfill: true, reservationDepth: c.reservationDepth },
  };
}

function job(id: string, accelerators: number, priority: number, runtime: number, submittedAt: number): PendingJob {
  return {
    id, name: id, team: 'team-a', kind: 'training', priority, preemptible: true, replicas: 1, minReplicas: 1,
    acceleratorsPerReplica: accelerators, cpuMillisPerReplica: 1000, memoryMiBPerReplica: 1024, flavors: ['h100'],
    flavorSelection: 'preference', topology: { level: 'none' }, expectedRuntimeSeconds: runtime, submittedAt,
  };
}

/** Start promised to the gang by a cycle: its reservation, else its pending estimate. */
function promisedStart(result: CycleResult): number | null {
  const r = result.reservations.find((x) => x.jobId === 'big-gang');
  if (r) return r.startAt;
  return result.pending.find((p) => p.jobId === 'big-gang')?.estimatedStartAt ?? null;
}

/** Returns a description of how the gang was delayed, or null when rule 6 held. */
function playReservation(c: ReservationCase): string | null {
  let s = reservationWorld(c);
  let promised: number | null = null;
  let next = 0;
  for (let step = 0; step <= c.steps.length; step++) {
    if (step > 0) {
      const { advance, arrivals } = c.steps[step - 1]!;
      s = finishDueJobs({ ...s, now: s.now + advance * 1000 });
      const jobs = arrivals.map((a) => ({ ...job(`small-${next++}`, a.accelerators, a.priority, a.runtime, s.now), team: a.team }));
      s = { ...s, pending: [...s.pending, ...jobs] };
    }
    const result = runCycle(s);
    const violations = checkInvariants(s, result);
    if (violations.length > 0) return `step ${step}: ${formatViolations(violations)}`;
    const at = (t: number | null): string => (t === null ? 'none' : `+${(t - WORLD_START) / 1000}s`);
    if (result.admissions.some((a) => a.jobId === 'big-gang')) return null;
    if (promised !== null && s.now >= promised) {
      return `step ${step}: now ${at(s.now)} reached the promised start ${at(promised)} but the gang is still pending (${result.pending[0]?.code}: ${result.pending[0]?.message})`;
    }
    const start = promisedStart(result);
    const reservation = result.reservations.find((x) => x.jobId === 'big-gang');
    if (!reservation) return `step ${step}: the gang at the head of the queue has no reservation (pending: ${JSON.stringify(result.pending[0])})`;
    if (start !== null && promised !== null && start > promised) {
      return `step ${step}: the gang's start moved later, from ${at(promised)} to ${at(start)}, after only smaller jobs arrived`;
    }
    promised = start;
    s = applyCycleResult(s, result);
  }
  return null;
}

describe('rule 6: a large gang at the head is not starved by small jobs', () => {
  it('keeps a reservation whose start never moves later, and starts when it comes', () => {
    fc.assert(
      fc.property(arbReservationCase, (c) => {
        const broken = playReservation(c);
        if (broken !== null) throw new Error(broken);
      }),
      { numRuns: 150 * SCALE },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Regressions: shrunk counterexamples of the properties above, as plain cases (see KNOWN-FAILURES.md)
// ---------------------------------------------------------------------------------------------

describe('regressions found by the properties', () => {
  it('reclaim never lets an elastic gang borrow (KNOWN-FAILURES, fixed 1)', () => {
    // team-a borrows 1 gaudi2 of team-b's nominal; team-b's elastic gang (1–2 replicas) reclaims it.
    const world = snapshot()
      .nodes(makeNode('g-0').flavor('gaudi2').accelerators(2))
      .teams(makeTeam('team-a').cohort('c').withinTeam('Never').reclaim('Any'), makeTeam('team-b').cohort('c').withinTeam('Never').reclaim('Any'))
      .quotas(makeQuota('team-a', 'gaudi2').nominal(1), makeQuota('team-b', 'gaudi2').nominal(1))
      .running(makeJob('a-borrows').team('team-a').flavors('gaudi2').accelerators(2).runsOn('g-0').admittedAt(T0 - HOUR))
      .pending(makeJob('b-elastic').team('team-b').flavors('gaudi2').replicas(2).minReplicas(1))
      .build();
    const result = runCycle(world);
    expect(formatViolations(checkInvariants(world, result))).toBe('');
    expect(result.admissions.map((a) => [a.jobId, a.replicas, a.preempts])).toEqual([['b-elastic', 1, ['a-borrows']]]);
  });

  it('a job never preempts its own preemptor back (KNOWN-FAILURES, fixed 2)', () => {
    // first preempted second earlier; now second is higher priority and first runs — but first preempted it.
    const world = snapshot()
      .nodes(makeNode('n-0').accelerators(4))
      .teams(makeTeam('team-a').withinTeam('LowerPriority'))
      .quotas(makeQuota('team-a', 'h100-80gb').nominal(8))
      .running({ ...makeJob('first').team('team-a').accelerators(4).priority(0).runsOn('n-0').admittedAt(T0 - HOUR).buildRunning(), preempted: ['second'] })
      .pending(makeJob('second').team('team-a').accelerators(4).priority(10))
      .build();
    const result = runCycle(world);
    expect(formatViolations(checkInvariants(world, result))).toBe('');
    expect(result.preemptions).toEqual([]);
  });
});
