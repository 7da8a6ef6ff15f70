import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { Flavor } from '#core';
import { buildCluster } from './cluster-file.js';
import { parseGavelThroughputs, parseGavelTrace } from './gavel-trace.js';
import { parsePhillyCsv } from './philly-trace.js';
import type { ClusterSpec, Rejected, SimJob, Trace } from './types.js';

/**
 * File loading for the simulator (libs/sim may do I/O; the core may not).
 * The traces directory is `$QM_TRACES_DIR`, else `../shared/traces` relative to the repository root.
 */
export function tracesDir(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const override = env.QM_TRACES_DIR;
  if (override !== undefined && override !== '') return isAbsolute(override) ? override : resolve(repoRoot, override);
  return resolve(repoRoot, '..', 'shared', 'traces');
}

export function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(`cannot read ${what} ${path}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message}`, { cause: e });
  }
}

export const PHILLY_FLAVOR: Flavor = { name: 'gpu', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 1 };

/** `vc,node num` → { vc: nodes }. */
export function parseVcNodes(text: string, source: string): Record<string, number> {
  const out: Record<string, number> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    const [vc, n] = raw.split(',');
    const nodes = Number(n);
    if (vc === undefined || vc === '' || !Number.isInteger(nodes) || nodes < 0) throw new Error(`${source}:${i + 1}: expected 'vc,node num', found '${raw}'`);
    out[vc] = nodes;
  }
  return out;
}

/** Philly's fleet as Helios simulates it: the VCs' nodes (philly_vc_nodes.csv) × 8 GPUs of one flavor. */
export function phillyCluster(vcNodes: Record<string, number>): ClusterSpec {
  const count = Object.values(vcNodes).reduce((a, b) => a + b, 0);
  return buildCluster([PHILLY_FLAVOR], [{ flavor: PHILLY_FLAVOR.name, count, acceleratorsPerNode: 8 }]);
}

/**
 * Gavel's simulated cluster: 36 V100 + 36 P100 + 36 K80. Gangs of up to 8 must fit one node, so
 * each type is 4 nodes × 8 + 1 node × 4. Relative speeds and prices are only used by jobs without
 * measured throughputs (every Gavel job has them). Other counts per type: `perType` (a number for all
 * three, or one per type, e.g. 48 V100 + 24 P100 + 36 K80).
 */
export function gavelCluster(perType: number | Readonly<Record<'v100' | 'p100' | 'k80', number>> = 36): ClusterSpec {
  const flavors: Flavor[] = [
    { name: 'v100', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 1, costPerHour: 2.48, memoryGiB: 16 },
    { name: 'p100', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 0.6, costPerHour: 1.46, memoryGiB: 16 },
    { name: 'k80', kind: 'nvidia-gpu', resourceName: 'nvidia.com/gpu', relativeSpeed: 0.25, costPerHour: 0.45, memoryGiB: 12 },
  ];
  const groups = flavors.flatMap((f) => {
    const count = typeof perType === 'number' ? perType : perType[f.name as 'v100' | 'p100' | 'k80'];
    const full = Math.floor(count / 8);
    const rest = count - full * 8;
    const g = [{ flavor: f.name, count: full, acceleratorsPerNode: 8 }];
    if (rest > 0) g.push({ flavor: f.name, count: 1, acceleratorsPerNode: rest });
    return g;
  });
  return { flavors, nodes: buildCluster(flavors, groups).nodes };
}

export function loadPhilly(path: string, flavors: Flavor[]): Trace & { epochMs: number } {
  return parsePhillyCsv(readText(path, 'Philly trace'), { source: basename(path), flavors });
}

/** Gavel traces: a directory of `<vc>.trace` files (all of them, team = vc) or a list of trace files. */
export function loadGavel(paths: string[], throughputsPath: string): Trace {
  const throughputs = parseGavelThroughputs(readText(throughputsPath, 'Gavel throughputs'), basename(throughputsPath));
  const files: string[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new Error(`cannot read Gavel trace ${p}: no such file or directory`);
    }
    if (isDir) {
      const traces = readdirSync(p).filter((f) => f.endsWith('.trace')).sort();
      if (traces.length === 0) throw new Error(`no .trace files in ${p}`);
      files.push(...traces.map((f) => join(p, f)));
    } else files.push(p);
  }
  const jobs: SimJob[] = [];
  const rejected: Rejected[] = [];
  for (const file of files) {
    const team = basename(file).replace(/\.trace$/, '');
    const t = parseGavelTrace(readText(file, 'Gavel trace'), { source: basename(file), team, throughputs });
    jobs.push(...t.jobs);
    rejected.push(...t.rejected);
  }
  return { jobs, rejected };
}
