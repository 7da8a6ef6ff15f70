import type { Rejected, SimJob, Trace } from './types.js';
import { gangShape } from './validate.js';

/** `{ v100: { "('ResNet-18 (batch size 16)', 1)": { "null": stepsPerSecond, ... } } }` */
export type GavelThroughputs = Record<string, Record<string, Record<string, unknown>>>;

export const GAVEL_ACCELERATORS = ['v100', 'p100', 'k80'] as const;

/** Parses and checks `simulation_throughputs.json`; throws with a clear message when it is not that shape. */
export function parseGavelThroughputs(text: string, source: string): GavelThroughputs {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not JSON (${(e as Error).message})`, { cause: e });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error(`${source}: expected an object keyed by accelerator type`);
  const obj = data as GavelThroughputs;
  for (const t of GAVEL_ACCELERATORS) {
    if (typeof obj[t] !== 'object' || obj[t] === null) throw new Error(`${source}: no throughputs for accelerator type '${t}'`);
  }
  return obj;
}

/**
 * Isolated steps/s of `jobType` at `scale` workers on an accelerator type. Exact key when measured
 * (scales 1, 2, 4, 8); otherwise the largest measured scale below, scaled linearly (20 workers = the
 * 8-worker figure × 20/8). Returns 0 when the type cannot run there (Gavel records 0 for out-of-memory)
 * and undefined when the job type is unknown.
 */
export function gavelThroughput(tp: GavelThroughputs, accelerator: string, jobType: string, scale: number): number | undefined {
  const table = tp[accelerator];
  if (table === undefined) return undefined;
  const exact = table[`('${jobType}', ${scale})`];
  if (exact !== undefined) return numberOf(exact);
  for (const base of [8, 4, 2, 1]) {
    if (base > scale) continue;
    const entry = table[`('${jobType}', ${base})`];
    if (entry !== undefined) return (numberOf(entry) * scale) / base;
  }
  return undefined;
}

/**
 * A job type's rate (steps/s at `scale` workers) on each accelerator type where it can run, as flavors
 * (`flavorOf`, default the type's name), fastest first — the job's own preference order. Undefined when
 * the job type is not in the table; no flavors when it cannot run anywhere (throughput 0 everywhere).
 */
export function gavelRates(tp: GavelThroughputs, jobType: string, scale: number, flavorOf?: Record<string, string>): { rates: Record<string, number>; flavors: string[] } | undefined {
  const rates: Record<string, number> = {};
  const flavors: string[] = [];
  let known = false;
  for (const acc of GAVEL_ACCELERATORS) {
    const r = gavelThroughput(tp, acc, jobType, scale);
    if (r === undefined) continue;
    known = true;
    if (r <= 0) continue;
    const flavor = flavorOf?.[acc] ?? acc;
    rates[flavor] = r;
    flavors.push(flavor);
  }
  if (!known) return undefined;
  flavors.sort((a, b) => rates[b]! - rates[a]! || (a < b ? -1 : 1));
  return { rates, flavors };
}

function numberOf(entry: Record<string, unknown>): number {
  const v = entry['null'];
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

export interface GavelOptions {
  /** File name, for messages. */
  source: string;
  /** The team (the virtual cluster the file is named after). */
  team: string;
  throughputs: GavelThroughputs;
  /** Gavel accelerator type → cluster flavor name (default: same name). */
  flavorOf?: Record<string, string>;
  /** Prefix of job ids (default the team). */
  idPrefix?: string;
  priority?: number;
}

/**
 * Parses one Gavel trace file (tab-separated, no header: job_type, command, num_steps_arg,
 * needs_data_dir, total_steps, arrival_time_s, scale_factor). A job's work is `total_steps`; its rate on
 * each accelerator type is the measured throughput at its scale factor, so it runs at different speeds
 * on V100, P100 and K80; types where it cannot run (throughput 0) are not acceptable flavors.
 */
export function parseGavelTrace(text: string, options: GavelOptions): Trace {
  const lines = text.split(/\r?\n/);
  const pad = String(lines.length).length;
  const jobs: SimJob[] = [];
  const rejected: Rejected[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const line = i + 1;
    const reject = (reason: string): void => {
      rejected.push({ line, source: options.source, reason });
    };
    const cells = raw.split('\t');
    if (cells.length !== 7) {
      reject(`expected 7 tab-separated fields, found ${cells.length}`);
      continue;
    }
    const jobType = cells[0]!.trim();
    const steps = Number(cells[4]);
    const arrival = Number(cells[5]);
    const scale = Number(cells[6]);
    if (!Number.isInteger(steps) || steps <= 0) {
      reject(`total_steps '${cells[4]}' is not a positive integer`);
      continue;
    }
    if (cells[5]!.trim() === '' || !Number.isFinite(arrival) || arrival < 0) {
      reject(`arrival_time_s '${cells[5]}' is not a non-negative number`);
      continue;
    }
    if (!Number.isInteger(scale) || scale <= 0) {
      reject(`scale_factor '${cells[6]}' is not a positive integer`);
      continue;
    }
    const measured = gavelRates(options.throughputs, jobType, scale, options.flavorOf);
    if (measured === undefined) {
      reject(`unknown job type '${jobType}' (not in the throughputs file)`);
      continue;
    }
    const { rates, flavors } = measured;
    if (flavors.length === 0) {
      reject(`job type '${jobType}' at scale ${scale} cannot run on any accelerator type (throughput 0)`);
      continue;
    }
    jobs.push({
      id: `${options.idPrefix ?? options.team}-${String(line).padStart(pad, '0')}`,
      line,
      source: options.source,
      team: options.team,
      submitSeconds: arrival,
      ...gangShape(scale),
      flavors,
      work: steps,
      rates,
      priority: options.priority ?? 0,
      preemptible: true,
      label: jobType,
    });
  }
  return { jobs, rejected };
}
