import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tracesDir } from '#sim';
import { UsageError } from './errors.js';

/** The small Philly slice shipped with the package (apps/cli/samples/traces, same layout as ../shared/traces). */
export const sampleTracesDir = (repoRoot: string): string => join(repoRoot, 'apps', 'cli', 'samples', 'traces');

/**
 * The traces directory for `qm simulate`: `$QM_TRACES_DIR`, else `../shared/traces` next to the repository,
 * else (an installed copy) the bundled sample, with a note saying so. Gavel has no sample: without a
 * traces directory it needs its files passed explicitly.
 */
export function simulationTracesDir(io: { repoRoot: string; env: NodeJS.ProcessEnv; stderr: { write(text: string): unknown } }, flags: { trace: string; traceFile?: string[]; throughputs?: string }): string {
  const dir = tracesDir(io.repoRoot, io.env);
  if (io.env.QM_TRACES_DIR !== undefined || existsSync(dir)) return dir;
  if (flags.trace === 'gavel' && (flags.traceFile === undefined || flags.throughputs === undefined)) {
    throw new UsageError(`no traces directory (${dir} does not exist): set QM_TRACES_DIR, or pass --trace-file and --throughputs for Gavel`);
  }
  const sample = sampleTracesDir(io.repoRoot);
  if (flags.traceFile === undefined) {
    io.stderr.write(`note: ${dir} does not exist; using the bundled sample trace (837 Philly jobs of 2017-11-17/18). Set QM_TRACES_DIR for the full traces.\n`);
  }
  return sample;
}
