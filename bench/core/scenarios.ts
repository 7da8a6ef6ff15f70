/**
 * The benchmark scenarios of the scheduling core. Each builds one Snapshot from a fixed seed.
 *
 * small        100 nodes, 200 running, 500 pending
 * large        4,000 nodes × 8 accelerators in 4 flavors, 20,000 running, 10,000 pending gangs (1–64)
 * deep         the large fleet with 50,000 pending
 * preemption   a full fleet of low-priority preemptible work; 2,000 high-priority arrivals that must
 *              reclaim (half from borrowing teams across the cohort, half from their own team)
 * parity-N     N nodes sized so 10,000 single-accelerator jobs of 2 teams all fit (YuniKorn's
 *              BenchmarkScheduling shape); drained over as many cycles as it takes
 */
import type { Snapshot, Team } from '#core';
import { Rng } from './rng.js';
import {
  BENCH_FLAVORS,
  capacityOf,
  makeFleet,
  makePending,
  makeRunning,
  makeTenancy,
  snapshotOf,
  type Tenancy,
} from './worlds.js';

export interface Scenario {
  name: string;
  build: () => Snapshot;
  /** Run cycles until the queue is empty and report jobs placed per second. */
  drain?: boolean;
  /** Target for the median cycle, in ms (reported, never asserted). */
  targetMs?: number;
}

const RUNNING_SIZES = [[1, 80], [2, 12], [4, 6], [8, 2]] as const;
const GANG_SIZES = [[1, 30], [2, 15], [4, 15], [8, 20], [16, 10], [32, 6], [64, 4]] as const;

function fleetWorld(seed: number, nodes: number, running: number, pending: number, teams: number, cohorts: number): Snapshot {
  const rng = new Rng(seed);
  const fleet = makeFleet({ nodes, acceleratorsPerNode: 8, flavors: BENCH_FLAVORS, cordoned: 0.01 }, rng);
  const tenancy = makeTenancy({ teams, cohorts, flavors: BENCH_FLAVORS, capacity: capacityOf(fleet) }, rng);
  return snapshotOf({
    nodes: fleet,
    flavors: BENCH_FLAVORS,
    tenancy,
    running: makeRunning(fleet, tenancy, { count: running, sizes: RUNNING_SIZES }, rng),
    pending: makePending(tenancy, BENCH_FLAVORS, { count: pending, sizes: GANG_SIZES, acceleratorsPerNode: 8 }, rng),
  });
}

function preemptionWorld(seed: number): Snapshot {
  const rng = new Rng(seed);
  const flavors = BENCH_FLAVORS.slice(0, 1);
  const flavor = flavors[0]!.name;
  const fleet = makeFleet({ nodes: 1000, acceleratorsPerNode: 8, flavors }, rng);
  const capacity = fleet.reduce((s, n) => s + n.accelerators - (n.external?.accelerators ?? 0), 0);
  // Five owners hold 3/4 of the nominal but use a third of it; five borrowers use the rest.
  const owners = Array.from({ length: 5 }, (_, i) => `owner-${i}`);
  const borrowers = Array.from({ length: 5 }, (_, i) => `borrower-${i}`);
  const team = (name: string): Team => ({
    name,
    cohort: 'research',
    fairShareWeight: 1,
    preemption: { withinTeam: 'LowerPriority', reclaimWithinCohort: 'Any' },
  });
  const ownerNominal = Math.floor((capacity * 0.75) / owners.length);
  const borrowerNominal = Math.floor((capacity * 0.25) / borrowers.length);
  const tenancy: Tenancy = {
    teams: [...owners, ...borrowers].map(team),
    cohorts: [{ name: 'research' }],
    quotas: [
      ...owners.map((t) => ({ team: t, flavor, nominal: ownerNominal, borrowingLimit: null, lendingLimit: null })),
      ...borrowers.map((t) => ({ team: t, flavor, nominal: borrowerNominal, borrowingLimit: null, lendingLimit: null })),
    ],
    flavorsOf: new Map([...owners, ...borrowers].map((t) => [t, [flavor]])),
  };
  const target = new Map<string, number>([
    ...owners.map((t) => [t, Math.floor(ownerNominal / 3)] as const),
    ...borrowers.map((t) => [t, Math.floor((capacity - (owners.length * ownerNominal) / 3) / borrowers.length)] as const),
  ]);
  const used = new Map<string, number>();
  const order = [...owners, ...borrowers];
  let turn = 0;
  const teamFor = (_flavor: string, size: number): string | undefined => {
    for (let k = 0; k < order.length; k++) {
      const t = order[(turn + k) % order.length]!;
      if ((used.get(t) ?? 0) + size <= target.get(t)!) {
        turn = (turn + k + 1) % order.length;
        used.set(t, (used.get(t) ?? 0) + size);
        return t;
      }
    }
    return undefined;
  };
  const running = makeRunning(fleet, tenancy, { count: 20_000, sizes: [[1, 4], [2, 3], [4, 2], [8, 1]], priority: 0, preemptible: true, teamFor }, rng);
  const arrivals = makePending(
    tenancy,
    flavors,
    { count: 2000, sizes: [[1, 5], [2, 3], [4, 2]], acceleratorsPerNode: 8, priority: 1000, topology: false, teamFor: (i) => order[i % order.length]!, idPrefix: 'urgent' },
    rng,
  );
  return snapshotOf({ nodes: fleet, flavors, tenancy, running, pending: arrivals });
}

function parityWorld(seed: number, nodes: number): Snapshot {
  const rng = new Rng(seed);
  const jobs = 10_000;
  const flavors = BENCH_FLAVORS.slice(0, 1);
  const perNode = Math.ceil(jobs / nodes);
  const fleet = makeFleet({ nodes, acceleratorsPerNode: perNode, flavors }, rng).map((n) => {
    const { external: _external, ...rest } = n;
    return { ...rest, cpuMillis: 4000 * perNode, memoryMiB: 32_768 * perNode };
  });
  const teams = ['team-a', 'team-b'];
  const tenancy: Tenancy = {
    teams: teams.map((name) => ({ name, cohort: null, fairShareWeight: 1, preemption: { withinTeam: 'Never', reclaimWithinCohort: 'Never' } })),
    cohorts: [],
    quotas: teams.map((team) => ({ team, flavor: flavors[0]!.name, nominal: jobs / 2, borrowingLimit: null, lendingLimit: null })),
    flavorsOf: new Map(teams.map((t) => [t, [flavors[0]!.name]])),
  };
  const pending = makePending(
    tenancy,
    flavors,
    { count: jobs, sizes: [[1, 1]], acceleratorsPerNode: perNode, priority: 0, topology: false, teamFor: (i) => teams[i % 2]! },
    rng,
  );
  return snapshotOf({ nodes: fleet, flavors, tenancy, running: [], pending });
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'small', build: () => fleetWorld(1, 100, 200, 500, 10, 2) },
  { name: 'large', build: () => fleetWorld(2, 4000, 20_000, 10_000, 100, 10), targetMs: 500 },
  { name: 'deep', build: () => fleetWorld(3, 4000, 20_000, 50_000, 100, 10), targetMs: 2000 },
  { name: 'preemption', build: () => preemptionWorld(4) },
  ...[500, 1000, 2000, 5000].map((n) => ({ name: `parity-${n}`, build: () => parityWorld(5, n), drain: true })),
];
