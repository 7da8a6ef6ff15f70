/**
 * Benchmark of the scheduling core: `npm run bench:core [scenario…] [--runs N] [--placement P] [--ordering fifo|shortest-first]`.
 *
 * For each scenario: build the seeded world, one warm-up cycle, then N timed cycles on the same snapshot
 * (runCycle is pure, so every run does the same work); print one JSON line with the median cycle time.
 * `parity-*` scenarios also drain the queue (cycle, apply, repeat) and report jobs placed per second.
 * One cycle of every scenario is checked with checkInvariants (`violations`). The last line is a summary
 * with the targets (large ≤ 500 ms, deep ≤ 2000 ms) as booleans — reported, never asserted.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { checkInvariants, checkSafetyInvariants, formatViolations, runCycle, type CycleResult, type Snapshot } from '#core';
import { applyCycleResult } from '#testing';
import { SCENARIOS, type Scenario } from './scenarios.js';

interface Line {
  scenario: string;
  placement: string;
  ordering: string;
  nodes: number;
  accelerators: number;
  pendingJobs: number;
  runningJobs: number;
  cycleMs: number;
  /** Median CPU time of the cycle (user + system), in ms. */
  cycleCpuMs: number;
  admitted: number;
  preempted: number;
  /** Of `preempted`, how many were reclaims across teams (the rest are within a team). */
  reclaimed: number;
  reserved: number;
  violations: number;
  /** Median wall time of checkInvariants (every rule) on this scenario's cycle, after a warm-up. */
  checkMs: number;
  /** Median wall time of checkSafetyInvariants (the subset the scheduler runs before every commit). */
  guardMs: number;
  runs: number;
  minMs: number;
  maxMs: number;
  buildMs: number;
  podsPerSec?: number;
  drainCycles?: number;
  drainMs?: number;
  drained?: boolean;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** Wall time and CPU time (user + system) of one cycle. CPU time is steadier on a shared, loaded machine. */
function timed(snapshot: Snapshot): { ms: number; cpuMs: number; result: CycleResult } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = runCycle(snapshot);
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ms, cpuMs: (c.user + c.system) / 1000, result };
}

/** Cycles until nothing is pending (or a cycle admits nothing). */
function drain(start: Snapshot): { ms: number; cycles: number; placed: number; drained: boolean } {
  let s = start;
  let ms = 0;
  let cycles = 0;
  let placed = 0;
  while (s.pending.length > 0) {
    const { ms: m, result } = timed(s);
    ms += m;
    cycles++;
    placed += result.admissions.length;
    if (result.admissions.length === 0) return { ms, cycles, placed, drained: false };
    s = applyCycleResult(s, result);
  }
  return { ms, cycles, placed, drained: true };
}

function runScenario(sc: Scenario, runs: number, placement: Placement | undefined, ordering: Ordering | undefined): Line {
  const b0 = performance.now();
  const built = sc.build();
  const snapshot = {
    ...built,
    options: { ...built.options, ...(placement === undefined ? {} : { flavorPlacement: placement }), ...(ordering === undefined ? {} : { ordering }) },
  };
  const buildMs = performance.now() - b0;
  const warm = timed(snapshot);
  const violations = checkInvariants(snapshot, warm.result); // also its warm-up
  const checks: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = performance.now();
    checkInvariants(snapshot, warm.result);
    checks.push(performance.now() - c0);
  }
  const checkMs = median(checks);
  const guards: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const g0 = performance.now();
    checkSafetyInvariants(snapshot, warm.result);
    if (i > 0) guards.push(performance.now() - g0); // the first is its warm-up
  }
  const guardMs = median(guards);
  if (violations.length > 0) process.stderr.write(`${sc.name}: ${violations.length} violation(s)\n${formatViolations(violations.slice(0, 10))}\n`);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = timed(snapshot);
    times.push(t.ms);
    cpu.push(t.cpuMs);
  }
  const line: Line = {
    scenario: sc.name,
    placement: snapshot.options.flavorPlacement ?? 'relative-speed',
    ordering: snapshot.options.ordering ?? 'fifo',
    nodes: snapshot.nodes.length,
    accelerators: snapshot.nodes.reduce((s, n) => s + n.accelerators, 0),
    pendingJobs: snapshot.pending.length,
    runningJobs: snapshot.running.length,
    cycleMs: round(median(times)),
    cycleCpuMs: round(median(cpu)),
    admitted: warm.result.admissions.length,
    preempted: warm.result.preemptions.length,
    reclaimed: warm.result.preemptions.filter((p) => p.kind === 'ReclaimWithinCohort').length,
    reserved: warm.result.reservations.length,
    violations: violations.length,
    checkMs: round(checkMs),
    guardMs: round(guardMs),
    runs,
    minMs: round(Math.min(...times)),
    maxMs: round(Math.max(...times)),
    buildMs: round(buildMs),
  };
  if (sc.drain) {
    const d = drain(snapshot);
    Object.assign(line, { podsPerSec: Math.round(d.placed / (d.ms / 1000)), drainCycles: d.cycles, drainMs: round(d.ms), drained: d.drained });
  }
  return line;
}

type Placement = NonNullable<Snapshot['options']['flavorPlacement']>;
type Ordering = NonNullable<Snapshot['options']['ordering']>;

function main(argv: string[]): void {
  let runs = 5;
  let placement: Placement | undefined;
  let ordering: Ordering | undefined;
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--runs') runs = Number(argv[++i]);
    else if (a === '--placement') {
      const p = argv[++i];
      if (p !== 'relative-speed' && p !== 'fastest-free') throw new Error(`--placement must be relative-speed or fastest-free, got ${String(p)}`);
      placement = p;
    } else if (a === '--ordering') {
      const o = argv[++i];
      if (o !== 'fifo' && o !== 'shortest-first') throw new Error(`--ordering must be fifo or shortest-first, got ${String(o)}`);
      ordering = o;
    } else names.push(a);
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${String(runs)}`);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const chosen = names.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => names.includes(s.name));
  const lines: Line[] = [];
  for (const sc of chosen) {
    const line = runScenario(sc, runs, placement, ordering);
    lines.push(line);
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  const ms = (name: string): number | null => lines.find((l) => l.scenario === name)?.cycleMs ?? null;
  const cpuMs = (name: string): number | null => lines.find((l) => l.scenario === name)?.cycleCpuMs ?? null;
  const within = (name: string, target: number, of = ms): boolean | null => {
    const m = of(name);
    return m === null ? null : m <= target;
  };
  const summary = {
    summary: true,
    node: process.version,
    runs,
    largeCycleMs: ms('large'),
    deepCycleMs: ms('deep'),
    largeWithin500ms: within('large', 500),
    deepWithin2000ms: within('deep', 2000),
    largeCpuMs: cpuMs('large'),
    deepCpuMs: cpuMs('deep'),
    largeCpuWithin500ms: within('large', 500, cpuMs),
    deepCpuWithin2000ms: within('deep', 2000, cpuMs),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
    cpus: cpus().length,
    totalViolations: lines.reduce((s, l) => s + l.violations, 0),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

main(process.argv.slice(2));
