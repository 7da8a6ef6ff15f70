import { UsageError } from '../errors.js';

/** `qm submit` without a file: the flags that make up the job. */
export interface InlineJobFlags {
  name?: string;
  gpus?: string;
  image?: string;
  replicas?: string;
  flavor?: string[];
  command?: string;
  kind?: string;
  priorityClass?: string;
  runtime?: string;
}

/** The flags that mean "a job without a file" (refused next to -f). */
export const INLINE_FLAGS: readonly (keyof InlineJobFlags)[] = ['name', 'gpus', 'image', 'replicas', 'flavor', 'command', 'kind', 'priorityClass', 'runtime'];
export const flagName = (key: keyof InlineJobFlags): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_MESSAGE = "must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)";
const KINDS = ['training', 'eval', 'batch-inference', 'serving'] as const;
/** The API's bounds of a submission (apps/api JOB_LIMITS), checked before anything is sent. */
const LIMITS = { replicas: 10_000, acceleratorsPerReplica: 64, flavors: 16, runtimeSeconds: 365 * 24 * 3600 };

export function checkName(flag: string, value: string): string {
  if (value.length > 63 || !DNS_LABEL.test(value)) throw new UsageError(`${flag} '${value}': ${DNS_MESSAGE}`);
  return value;
}

function wholeNumber(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) throw new UsageError(`${flag} '${text}': expected a whole number from ${min} to ${max}`);
  return Number(text);
}

/** `2h`, `90m`, `30s`, `1d`, or plain seconds. */
function runtimeSeconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|min|h|d)?$/.exec(text.trim());
  const unit = m === null ? undefined : { s: 1, m: 60, min: 60, h: 3600, d: 86_400 }[(m[2] ?? 's') as 's' | 'm' | 'min' | 'h' | 'd'];
  const seconds = m === null || unit === undefined ? NaN : Math.round(Number(m[1]) * unit);
  if (!(seconds >= 1 && seconds <= LIMITS.runtimeSeconds)) throw new UsageError(`--runtime '${text}': expected a duration from 1 s to 365 d, e.g. 2h, 90m`);
  return seconds;
}

/**
 * A command line as a shell splits it: words apart by blanks, '…' and "…" quote, a backslash escapes the next
 * character (outside single quotes). No expansion of any kind.
 */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (c === '\\' && i + 1 < text.length && (quote === undefined || '"\\$`'.includes(text[i + 1]!))) {
      word = (word ?? '') + text[++i]!;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote !== undefined) throw new UsageError(`--command '${text}': unterminated ${quote === '"' ? 'double' : 'single'} quote`);
  if (word !== undefined) words.push(word);
  return words;
}

/** Comma-separated and repeated `--flavor` values, in order, each once. */
function flavorList(values: string[]): string[] {
  const out: string[] = [];
  for (const v of values.flatMap((x) => x.split(','))) {
    const f = v.trim();
    if (f === '') throw new UsageError(`--flavor '${values.join(',')}': an empty flavor name`);
    checkName('--flavor', f);
    if (!out.includes(f)) out.push(f);
  }
  if (out.length > LIMITS.flavors) throw new UsageError(`--flavor: at most ${LIMITS.flavors} flavors`);
  return out;
}

/**
 * The job (in the API's POST /v1/jobs shape) that the flags describe, checked as the API would check it, so
 * that a mistake is a usage error naming the flag (exit 2) before anything is sent. `team` and, when no
 * --flavor is given, `flavors` are left for the caller (they come from the environment and the server).
 * `words`: the command after `--`.
 */
export function inlineJob(flags: InlineJobFlags, words: string[]): Record<string, unknown> & { flavors?: string[] } {
  const missing = (['name', 'gpus', 'image'] as const).filter((k) => flags[k] === undefined).map(flagName);
  if (missing.length > 0) {
    throw new UsageError(`a job without a file needs ${missing.join(', ')} (or give a job file with -f; see qm submit --help)`);
  }
  const name = checkName('--name', flags.name!);
  const acceleratorsPerReplica = wholeNumber('--gpus', flags.gpus!, 0, LIMITS.acceleratorsPerReplica);
  const image = flags.image!.trim();
  if (image === '' || /\s/.test(image)) throw new UsageError(`--image '${flags.image}': expected an image reference without blanks, e.g. ghcr.io/acme/llama-ft:1.4`);
  const replicas = flags.replicas === undefined ? 1 : wholeNumber('--replicas', flags.replicas, 1, LIMITS.replicas);
  if (flags.command !== undefined && words.length > 0) throw new UsageError('give the command either with --command or after --, not both');
  const command = flags.command !== undefined ? splitCommand(flags.command) : words;
  if (flags.command !== undefined && command.length === 0) throw new UsageError("--command '': expected a command, e.g. --command 'python train.py'");
  const kind = flags.kind === undefined ? undefined : KINDS.find((k) => k === flags.kind);
  if (flags.kind !== undefined && kind === undefined) throw new UsageError(`--kind '${flags.kind}': expected one of ${KINDS.join(', ')}`);
  const priorityClass = flags.priorityClass === undefined ? undefined : checkName('--priority-class', flags.priorityClass);
  const flavors = flags.flavor === undefined ? undefined : flavorList(flags.flavor);
  return {
    name,
    ...(kind === undefined ? {} : { kind }),
    replicas,
    acceleratorsPerReplica,
    ...(flavors === undefined ? {} : { flavors }),
    ...(priorityClass === undefined ? {} : { priorityClass }),
    ...(flags.runtime === undefined ? {} : { expectedRuntimeSeconds: runtimeSeconds(flags.runtime) }),
    template: { image, ...(command.length > 0 ? { command } : {}) },
  };
}
