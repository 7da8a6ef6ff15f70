import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CliFailure } from '../errors.js';
import type { QmIo } from '../io.js';
import { readStdin } from './common.js';

/**
 * Reads a job in the API's shape (POST /v1/jobs) from a YAML or JSON file, or stdin for `-`: exactly one
 * document, a mapping. Every problem is one line naming the file (and line and column for syntax errors).
 */
export async function readJobFile(io: QmIo, file: string): Promise<Record<string, unknown>> {
  const label = file === '-' ? 'stdin' : file;
  let text: string;
  if (file === '-') {
    text = await readStdin(io, 'the job');
  } else {
    try {
      text = readFileSync(resolve(io.cwd, file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
      throw new CliFailure(`cannot read job file ${file}: ${why}`);
    }
  }
  if (text.trim() === '') throw new CliFailure(`${label} is empty: expected a job in YAML or JSON (see qm submit --help)`);
  return parseJob(text, label);
}

export function parseJob(text: string, label: string): Record<string, unknown> {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false });
  if (!Array.isArray(docs)) throw new CliFailure(`${label}: not a YAML or JSON document`);
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  for (const d of nonEmpty) {
    const e = d.errors[0];
    if (e !== undefined) {
      const at = e.linePos?.[0];
      const where = at ? `line ${at.line}, column ${at.col}: ` : '';
      throw new CliFailure(`${label}: ${where}${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
    }
  }
  if (nonEmpty.length !== 1) throw new CliFailure(`${label} holds ${nonEmpty.length} documents; qm submit takes one job per file`);
  const value: unknown = nonEmpty[0]!.toJS({ maxAliasCount: 100 });
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliFailure(`${label}: expected a job (a mapping with name, team, replicas, …), got ${Array.isArray(value) ? 'a list' : typeof value === 'string' ? 'a string' : String(value)}`);
  }
  return value as Record<string, unknown>;
}
