import { DEFAULT_OPTIONS, type Flavor } from '#core';
import type { Rejected, SimJob, Trace } from './types.js';

/** The columns of a Job row the what-if replay needs. */
export interface JobHistoryRow {
  id: string;
  team: string;
  priority: number;
  preemptible: boolean;
  replicas: number;
  acceleratorsPerReplica: number;
  flavors: string[];
  speeds: unknown;
  expectedRuntimeSeconds: number | null;
  /** The job's checkpoint policy (JSON; null = it does not checkpoint). */
  checkpoint: unknown;
  /** Fraction of its work done at the checkpoint its current (or next) run resumes from; null = from the start. */
  resumeFraction: number | null;
  state: string;
  flavor: string | null;
  submittedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Turns job history into a trace replayed from `since`, starting from the cluster's state then: rows
 * are the jobs submitted in the window and those submitted before it that had not ended by `since`.
 * Run time of a job:
 * - finished (SUCCEEDED, FAILED, or CANCELLED after it started): finishedAt − startedAt, measured on the
 *   flavor it ran on (work = that time × the flavor's rate for the job);
 * - running: the longer of its expected runtime and the time it has run so far;
 * - waiting: its expected runtime, else `defaultRuntimeSeconds`.
 * A job that checkpoints and was requeued resumes from its checkpoint: its expected runtime is then that
 * of the rest of its work, `expectedRuntimeSeconds × (1 − resumeFraction)` (as the scheduler's snapshot
 * gives it to the core: libs/db snapshot-rows.ts `remainingRuntime`), for the run going on and the next one.
 * A job that started before `since` and had not ended by then is running at the start of the replay
 * (`runningAtStart`, with only the work left after `since`); one submitted before `since` that had not
 * started by then waits at the start (negative `submitSeconds`). (A job preempted and restarted keeps
 * only its latest start: if that is after `since`, it is taken as waiting at `since`.)
 * Jobs that never started and ended (cancelled or failed while pending) are listed as rejected with the
 * reason, as are rows with an unusable shape. A job's rate on a flavor is its `speeds` entry, else the
 * flavor's relativeSpeed.
 */
export function historyToTrace(rows: JobHistoryRow[], flavors: Flavor[], since: number, now: number, defaultRuntimeSeconds = DEFAULT_OPTIONS.defaultExpectedRuntimeSeconds): Trace {
  const speedOf = new Map(flavors.map((f) => [f.name, f.relativeSpeed]));
  const pad = String(rows.length).length;
  const jobs: SimJob[] = [];
  const rejected: Rejected[] = [];
  rows.forEach((row, i) => {
    const line = i + 1;
    const reject = (reason: string): void => {
      rejected.push({ line, source: `db job ${row.id}`, reason });
    };
    if (row.flavors.length === 0 || row.replicas < 1 || row.acceleratorsPerReplica < 1) {
      reject('no flavors or no accelerators requested');
      return;
    }
    const speeds = typeof row.speeds === 'object' && row.speeds !== null && !Array.isArray(row.speeds) ? (row.speeds as Record<string, unknown>) : {};
    const rates: Record<string, number> = {};
    for (const f of row.flavors) {
      const s = speeds[f];
      rates[f] = typeof s === 'number' && s > 0 ? s : speedOf.get(f) ?? 1;
    }
    const start = row.startedAt?.getTime() ?? null;
    const end = row.finishedAt?.getTime() ?? null;
    let seconds: number;
    let onFlavor = row.flavor !== null && row.flavor in rates ? row.flavor : row.flavors[0]!;
    if (end !== null) {
      if (start === null) {
        reject(`${row.state.toLowerCase()} before it started`);
        return;
      }
      seconds = (end - start) / 1000;
    } else if (start !== null) {
      seconds = Math.max((now - start) / 1000, remainingRuntime(row) ?? 0);
    } else {
      seconds = remainingRuntime(row) ?? defaultRuntimeSeconds;
      onFlavor = row.flavors[0]!;
    }
    // Running at `since`: only the work after it is left.
    const runningAtStart = start !== null && start < since && (end === null || end > since);
    if (runningAtStart) seconds -= (since - start) / 1000;
    jobs.push({
      ...(runningAtStart ? { runningAtStart: { flavor: onFlavor, startSeconds: (start - since) / 1000 } } : {}),
      id: `db-${String(line).padStart(pad, '0')}`,
      line,
      source: `db job ${row.id}`,
      team: row.team,
      submitSeconds: (row.submittedAt.getTime() - since) / 1000,
      replicas: row.replicas,
      acceleratorsPerReplica: row.acceleratorsPerReplica,
      flavors: row.flavors,
      work: Math.max(seconds, 1) * rates[onFlavor]!,
      rates,
      priority: row.priority,
      preemptible: row.preemptible,
      label: row.id,
    });
  });
  return { jobs, rejected };
}

/**
 * The expected runtime of the job's current or next run: all of `expectedRuntimeSeconds`, or, for a job
 * that checkpoints and resumes from a checkpoint, only the part after it (the snapshot's rule, snapshot-rows.ts).
 */
function remainingRuntime(row: Pick<JobHistoryRow, 'expectedRuntimeSeconds' | 'checkpoint' | 'resumeFraction'>): number | null {
  const full = row.expectedRuntimeSeconds;
  const done = row.resumeFraction;
  if (full === null || row.checkpoint === null || row.checkpoint === undefined || done === null || !(done > 0)) return full;
  return Math.max(1, Math.ceil(full * (1 - Math.min(1, done))));
}
