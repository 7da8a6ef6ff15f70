import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CliFailure, InputError } from '../errors.js';
import type { QmIo } from '../io.js';
import { readStdin } from './common.js';

/**
 * Reads a job in the API's shape (POST /v1/jobs) from a YAML or JSON file, or stdin for `-`: exactly one
 * document, a mapping. Every problem is one line naming the file (and line and column for syntax errors): a
 * file that cannot be read is a failure (exit 1), content that is not a job is bad input (InputError, exit 2).
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
  if (text.trim() === '') throw new InputError(`${label} is empty: expected a job in YAML or JSON (see qm submit --help)`);
  return parseJob(text, label);
}

export function parseJob(text: string, label: string): Record<string, unknown> {
  if (/\.json$/i.test(label)) return asJob(parseJson(text, label), label);
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs)) throw new InputError(`${label}: not a YAML or JSON document`);
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  if (nonEmpty.length === 0) throw new InputError(`${label} is empty: expected a job in YAML or JSON (see qm submit --help)`);
  for (const d of nonEmpty) {
    const e = d.errors[0];
    if (e !== undefined) {
      const at = e.linePos?.[0];
      const where = at ? `line ${at.line}, column ${at.col}: ` : '';
      throw new InputError(`${label}: ${where}${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
    }
  }
  if (nonEmpty.length !== 1) throw new InputError(`${label} holds ${nonEmpty.length} documents; qm submit takes one job per file`);
  return asJob(nonEmpty[0]!.toJS({ maxAliasCount: 100 }), label);
}

/** Strict JSON for `.json` files (YAML would accept a trailing comma), with the line and column of an error. */
function parseJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const message = (error as Error).message;
    const pos = /at position (\d+)/.exec(message);
    if (pos === null) throw new InputError(`${label}: ${message}`);
    const before = text.slice(0, Number(pos[1]));
    const line = before.split('\n').length;
    const col = before.length - before.lastIndexOf('\n');
    throw new InputError(`${label}: line ${line}, column ${col}: ${message.replace(/ in JSON at position \d+.*$/, '')}`);
  }
}

function asJob(value: unknown, label: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError(`${label}: expected a job (a mapping with name, team, replicas, …), got ${Array.isArray(value) ? 'a list' : typeof value === 'string' ? 'a string' : String(value)}`);
  }
  try {
    JSON.stringify(value);
  } catch {
    throw new InputError(`${label}: a YAML alias refers to itself (the job must be plain data)`);
  }
  return value as Record<string, unknown>;
}
