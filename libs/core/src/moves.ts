/**
 * Moves to faster accelerators: the cycle's last step (after every pending job was decided).
 *
 * A running job moves from its flavor g to a flavor f it accepts when all of these hold:
 * - it declares checkpointing (`checkpoint`), is preemptible, chooses by speed (`flavorSelection:
 *   'fastest'`, relative-speed placement) and has a known expected runtime; it is past the minimum
 *   runtime before preemption and was not admitted in this cycle;
 * - f is faster for it than g (its expected runtime there is shorter: per-job `speeds`, as every runtime
 *   estimate of the core), so a job only ever moves up: it
 *   moves at most once per faster flavor it accepts, and never back (no ping-pong by construction);
 * - it fits on f now, after this cycle's admissions and without delaying any reservation (fit.ts);
 * - it is expected to finish sooner there, including what a move costs: the work since its last
 *   checkpoint is done again, and it restarts after its grace period plus `restartSeconds`:
 *
 *       end_f = now + grace + restart + (end_g − lastCheckpoint) × speed_g ÷ speed_f
 *
 *   and end_g − end_f is at least `minGainSeconds` and `minGainFraction` of its remaining time on g.
 *
 * Candidates go largest gain first (ties by id), at most `maxPerCycle` per cycle. A move is a
 * preemption whose job is admitted again on f in the same decision (`Move`): the app evicts it and
 * re-binds it on f in one commit.
 */
import { type Holding, expectedEnd } from './cycle-state.js';
import type { CycleState } from './cycle-state.js';
import { tryFlavor } from './fit.js';
import { runtimeOn } from './flavor-selection.js';
import type { JobRole, JobSpec, Move, MoveOptions, PendingJob, ReplicaPlacement } from './model.js';
import { borrowedOf } from './quota.js';
import { moveMessage } from './reasons.js';
import { placesByRelativeSpeed } from './relative-placement.js';
import { envelopeOf, isMultiRole, rolesOf } from './roles.js';

/**
 * A running multi-role gang's roles at the counts it was admitted with (its placement names each replica's role),
 * each count its minimum: what a move re-places. Nothing for a job of one role.
 */
function admittedRoles(job: JobSpec & { placement?: readonly ReplicaPlacement[] }): Partial<PendingJob> {
  if (!isMultiRole(job) || job.placement === undefined) return {};
  const counts = new Map<string, number>();
  for (const p of job.placement) if (p.role !== undefined) counts.set(p.role, (counts.get(p.role) ?? 0) + 1);
  const roles = rolesOf(job).flatMap((r) => {
    const k = counts.get(r.name) ?? 0;
    return k === 0 ? [] : [{ ...r, replicas: k, minReplicas: k }];
  });
  // The per-replica fields are the roles' envelope (one role left: its own shape).
  return { ...envelopeOf(roles), roles };
}

export const DEFAULT_MOVE_OPTIONS: MoveOptions = { maxPerCycle: 4, minGainSeconds: 1800, minGainFraction: 0.2, restartSeconds: 300 };

interface Candidate {
  h: Holding;
  to: string;
  end: number;
  gain: number;
}

/** The options in force (defaults for missing or malformed figures); `maxPerCycle` 0 turns moves off. */
export function moveOptions(st: CycleState): MoveOptions {
  return resolveMoveOptions(st.snapshot.options.moves);
}

/** `options.moves` with defaults for missing or malformed figures (the core's cycle and the simulator read it alike). */
export function resolveMoveOptions(o: Partial<MoveOptions> | undefined): MoveOptions {
  const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  return {
    maxPerCycle: Math.floor(num(o?.maxPerCycle, DEFAULT_MOVE_OPTIONS.maxPerCycle)),
    minGainSeconds: num(o?.minGainSeconds, DEFAULT_MOVE_OPTIONS.minGainSeconds),
    minGainFraction: num(o?.minGainFraction, DEFAULT_MOVE_OPTIONS.minGainFraction),
    restartSeconds: num(o?.restartSeconds, DEFAULT_MOVE_OPTIONS.restartSeconds),
  };
}

/**
 * Whether a job of this kind may move once running: it checkpoints, is preemptible, chooses by speed and has a
 * runtime. Whether moves are on at all (`moveOptions(st).maxPerCycle > 0`) is the caller's, read once per cycle.
 */
export function movable(st: CycleState, job: JobSpec): boolean {
  const cp = job.checkpoint;
  if (cp === undefined || !(cp.intervalSeconds > 0) || !job.preemptible) return false;
  return job.expectedRuntimeSeconds !== null && placesByRelativeSpeed(st, job);
}

/** Whether a running job may move now (before looking at capacity; planMoves has checked that moves are on). */
export function mayMove(st: CycleState, h: Holding): boolean {
  if (h.admittedThisCycle || h.removed || h.evicted === true || h.replicas.length === 0) return false;
  if (!movable(st, h.job)) return false;
  return st.now - h.admittedAt >= st.snapshot.options.minRuntimeBeforePreemptionSeconds * 1000;
}

const grace = (h: Holding): number => {
  const g = h.job.checkpoint?.gracePeriodSeconds ?? 0;
  return Number.isFinite(g) && g > 0 ? g : 0;
};

/** Decides this cycle's moves and applies them to the state (the job holds its new placement). */
export function planMoves(st: CycleState): Move[] {
  const opts = moveOptions(st);
  if (opts.maxPerCycle <= 0) return [];
  const candidates: Candidate[] = [];
  for (const flavor of st.flavors.keys()) {
    // Sorting the timeline pays only when a job on it may move (holdings admitted in this cycle, not in
    // holdingsOn, never may).
    if (!st.holdingsOn(flavor).some((h) => mayMove(st, h))) continue;
    for (const h of st.timeline(flavor)) {
      if (!mayMove(st, h)) continue;
      const c = bestTarget(st, h, opts);
      if (c !== undefined) candidates.push(c);
    }
  }
  candidates.sort((x, y) => y.gain - x.gain || (x.h.job.id < y.h.job.id ? -1 : x.h.job.id > y.h.job.id ? 1 : 0));
  const moves: Move[] = [];
  for (const c of candidates) {
    if (moves.length >= opts.maxPerCycle) break;
    const m = tryMove(st, c, opts);
    if (m !== undefined) moves.push(m);
  }
  return moves;
}

/** The faster flavor with free room where the job would finish earliest, if that clears the thresholds. */
function bestTarget(st: CycleState, h: Holding, opts: MoveOptions): Candidate | undefined {
  // Runtimes scale as the core's estimates do (runtimeOn): by the job's speeds, when it declares them.
  const rtFrom = runtimeOn(h.job, h.flavor, st.flavors);
  if (rtFrom === null || !(rtFrom > 0)) return undefined;
  const left = h.end - st.now;
  const redo = h.end - Math.min(h.checkpointAt, st.now);
  let best: Candidate | undefined;
  for (const f of new Set(h.job.flavors)) {
    if (f === h.flavor) continue;
    const cap = st.cluster.flavor(f);
    if (!st.flavors.has(f) || cap === undefined || cap.totalFree < h.accelerators) continue;
    const rt = runtimeOn(h.job, f, st.flavors);
    // Only ever up: to a flavor where the job runs faster.
    if (rt === null || !(rt > 0) || !(rt < rtFrom)) continue;
    const end = st.now + (grace(h) + opts.restartSeconds) * 1000 + (redo * rt) / rtFrom;
    const gain = h.end - end;
    if (gain < opts.minGainSeconds * 1000 || gain < opts.minGainFraction * left) continue;
    if (best === undefined || end < best.end) best = { h, to: f, end, gain };
  }
  return best;
}

function tryMove(st: CycleState, c: Candidate, opts: MoveOptions): Move | undefined {
  const { h, to } = c;
  const k = h.replicas.length;
  // The job as it would start on `to`: its admitted replicas, and the rest of its work as its runtime
  // (expressed, like expectedRuntimeSeconds, on its fastest flavor: runtimeOn scales it back).
  const runtimeThere = (c.end - st.now) / 1000;
  const full = runtimeOn(h.job, to, st.flavors)!;
  const spec: PendingJob = {
    ...h.job,
    replicas: k,
    minReplicas: k,
    expectedRuntimeSeconds: (h.job.expectedRuntimeSeconds! * runtimeThere) / full,
    ...admittedRoles(h.job),
  };
  const r = tryFlavor(st, spec, to);
  if (!r.ok) return undefined;
  // Each replica with its own role's shape (a multi-role gang: its roles at the counts it runs with).
  const roles = r.roleOf === undefined ? undefined : rolesOf(spec);
  const shapeOf = (i: number): JobRole | PendingJob => roles?.[r.roleOf![i]!] ?? spec;
  const e = st.quota.get(h.job.team, to)!;
  const borrowedBefore = borrowedOf(e);
  const lostAcceleratorSeconds = (h.accelerators * Math.max(0, st.now - h.checkpointAt)) / 1000;
  st.release(h);
  st.evict(h);
  const replicas = r.nodes.map((node, i) => {
    const shape = shapeOf(i);
    return { node, a: shape.acceleratorsPerReplica, c: shape.cpuMillisPerReplica, m: shape.memoryMiBPerReplica };
  });
  const moved: Holding = {
    job: spec,
    flavor: to,
    replicas,
    accelerators: replicas.reduce((sum, x) => sum + x.a, 0),
    admittedAt: st.now,
    checkpointAt: st.now,
    end: expectedEnd(st.now, runtimeThere, opts.restartSeconds, st.now),
    admittedThisCycle: true,
    removed: true,
    preempted: undefined,
    lastPreemptedAt: undefined,
    evicted: false,
    indexed: false,
  };
  st.hold(moved);
  return {
    jobId: h.job.id,
    team: h.job.team,
    from: h.flavor,
    to,
    replicas: r.nodes.length,
    placement: replicas.map((x, replica) => ({
      replica,
      ...(roles === undefined ? {} : { role: roles[r.roleOf![replica]!]!.name }),
      node: st.cluster.nodes[x.node]!.name,
      accelerators: x.a,
      cpuMillis: x.c,
      memoryMiB: x.m,
    })),
    borrowed: borrowedOf(e) - borrowedBefore,
    lostAcceleratorSeconds,
    lostSince: Math.min(h.checkpointAt, st.now),
    gracePeriodSeconds: grace(h),
    expectedEndBefore: h.end,
    expectedEndAfter: c.end,
    message: moveMessage(h.flavor, to, c.gain, lostAcceleratorSeconds),
  };
}
