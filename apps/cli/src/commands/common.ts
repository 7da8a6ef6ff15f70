import type { Command } from 'commander';
import type { QmIo } from '../io.js';
import { CliFailure, UsageError } from '../errors.js';
import { asNames, machine, type ObjectKind, type OutputFormat } from '../output/render.js';
import type { Frame } from './watch.js';

/** The help text's example block (every command has one). */
export function example(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** Reads all of stdin (for `-f -` and `--token -`). */
export async function readStdin(io: QmIo, what: string): Promise<string> {
  const stdin = io.stdin;
  if (stdin === undefined) throw new UsageError(`cannot read ${what} from stdin here`);
  if ((stdin as { isTTY?: boolean }).isTTY === true) throw new UsageError(`'-' reads ${what} from stdin, but stdin is a terminal: pipe it in`);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk));
  } catch (error) {
    throw new CliFailure(`cannot read ${what} from stdin: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A positive integer flag value. */
export function positiveInt(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag} '${text}': expected a positive integer`);
  return Number(text);
}

/** A non-negative integer, or `none` (no limit → null). */
export function limitValue(flag: string, text: string): number | null {
  if (/^(none|unlimited|null)$/i.test(text)) return null;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag} '${text}': expected a non-negative integer, or none for no limit`);
  return Number(text);
}

/** Path segment of an API URL. */
export const seg = (s: string): string => encodeURIComponent(s);

/** `--no-headers` (kubectl's): every command that prints a table takes it. Commander gives `headers: false`. */
export function noHeadersOption(cmd: Command): Command {
  return cmd.option('--no-headers', 'print tables without their header line (nor a title or legend): the rows alone, for sort, awk, wc -l');
}

/**
 * What a listing prints in `format`: json/yaml (the API's objects), name (`kind/name` lines), or the table
 * (`table()`); `empty`, when given, is said on stderr instead of a table without rows. The key is the data.
 */
export function listingFrame<T extends { name: string }>(
  format: OutputFormat,
  items: readonly T[],
  kind: ObjectKind,
  table: () => string,
  empty?: string,
): Frame {
  const key = JSON.stringify(items);
  const m = machine(format, items);
  if (m !== undefined) return { key, text: m };
  if (items.length === 0 && empty !== undefined) return { key, text: '', note: empty };
  if (format === 'name') return { key, text: asNames(kind, items) };
  return { key, text: table() };
}

/** Prints one frame (outside a watch): its text on stdout, else its note on stderr; then its hint on stderr. */
export function printFrame(io: { out(text: string): void; warn(line: string): void }, frame: Frame): void {
  if (frame.text !== '') io.out(frame.text);
  else if (frame.note !== undefined) io.warn(frame.note);
  if (frame.hint !== undefined) io.warn(frame.hint);
}
