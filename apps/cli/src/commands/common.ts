import type { QmIo } from '../io.js';
import { CliFailure, UsageError } from '../errors.js';

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
