import type { Flavor } from '#core';
import type { Rejected, SimJob, Trace } from './types.js';
import { gangShape } from './validate.js';

export const PHILLY_HEADER = 'timestamp,duration,num_gpus,gpu_time,cluster';
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/;
const TEAM = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface PhillyOptions {
  source: string;
  /** Flavors every job accepts (Philly does not say); a job runs at `relativeSpeed` × its traced speed. */
  flavors: Flavor[];
  priority?: number;
}

/**
 * Parses the Philly CSV (`timestamp,duration,num_gpus,gpu_time,cluster`, timestamps UTC). The cluster
 * (virtual cluster) becomes the team; `num_gpus` becomes a gang (see gangShape); `gpu_time` is not used.
 * Bad rows are returned in `rejected` with their line number; a wrong header throws.
 * Virtual time 0 is the earliest timestamp (returned as `epochMs`).
 */
export function parsePhillyCsv(text: string, options: PhillyOptions): Trace & { epochMs: number } {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').trim();
  if (header !== PHILLY_HEADER) {
    throw new Error(`${options.source}:1: expected the header '${PHILLY_HEADER}', found '${header.slice(0, 80)}'`);
  }
  const rejected: Rejected[] = [];
  const rows: { line: number; epochMs: number; duration: number; gpus: number; team: string }[] = [];
  const pad = String(lines.length).length;
  // One string per team, shared by all its jobs: the core looks teams up in maps for every running and
  // pending job of every cycle, and equal strings that are one object compare without reading them.
  const teams = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const line = i + 1;
    const reject = (reason: string): void => {
      rejected.push({ line, source: options.source, reason });
    };
    const cells = raw.split(',');
    if (cells.length !== 5) {
      reject(`expected 5 comma-separated fields, found ${cells.length}`);
      continue;
    }
    const [ts, durationText, gpusText, , teamText] = cells.map((c) => c.trim()) as [string, string, string, string, string];
    const m = TIMESTAMP.exec(ts);
    const epochMs = m === null ? NaN : Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
    if (Number.isNaN(epochMs)) {
      reject(`timestamp '${ts}' is not 'YYYY-MM-DD hh:mm:ss'`);
      continue;
    }
    const duration = Number(durationText);
    if (durationText === '' || !Number.isFinite(duration)) {
      reject(`duration '${durationText}' is not a number`);
      continue;
    }
    if (duration <= 0) {
      reject(`duration ${durationText} is ${duration < 0 ? 'negative' : 'zero'}`);
      continue;
    }
    const gpus = Number(gpusText);
    if (!Number.isInteger(gpus) || gpus <= 0) {
      reject(`num_gpus '${gpusText}' is not a positive integer`);
      continue;
    }
    if (!TEAM.test(teamText)) {
      reject(`cluster '${teamText}' is not a valid team name (DNS label)`);
      continue;
    }
    let team = teams.get(teamText);
    if (team === undefined) {
      team = teamText;
      teams.set(team, team);
    }
    rows.push({ line, epochMs, duration, gpus, team });
  }
  let epoch = Infinity;
  for (const r of rows) if (r.epochMs < epoch) epoch = r.epochMs;
  if (epoch === Infinity) epoch = 0;
  const rates: Record<string, number> = {};
  for (const f of options.flavors) rates[f.name] = f.relativeSpeed;
  const flavors = options.flavors.map((f) => f.name);
  const jobs: SimJob[] = rows.map((r) => ({
    id: `philly-${String(r.line).padStart(pad, '0')}`,
    line: r.line,
    source: options.source,
    team: r.team,
    submitSeconds: (r.epochMs - epoch) / 1000,
    ...gangShape(r.gpus),
    flavors,
    work: r.duration,
    rates,
    priority: options.priority ?? 0,
    preemptible: true,
  }));
  return { jobs, rejected, epochMs: epoch };
}
