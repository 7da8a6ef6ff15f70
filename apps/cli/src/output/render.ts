import { stringify } from 'yaml';
import { UsageError } from '../errors.js';

/**
 * `table`/`wide`/`text`/`id`/`csv` are for people and shells; `json`/`yaml` print the API's objects; `name`
 * prints `kind/name` per object, one a line, as `kubectl get -o name` does.
 */
export type OutputFormat = 'table' | 'wide' | 'text' | 'id' | 'name' | 'json' | 'yaml' | 'csv';

/** What `-o name` calls each kind of object: `job/llama-ft-7`, `team/vision`, `flavor/h100-80gb`, `node/gpu-1`, `cohort/research`. */
export type ObjectKind = 'job' | 'team' | 'flavor' | 'node' | 'cohort';

/** `-o name`: `kind/name`, one a line (nothing for no objects). */
export const asNames = (kind: ObjectKind, items: readonly { name: string }[]): string => items.map((i) => `${kind}/${i.name}\n`).join('');

/** Checks `-o`'s value against what a command offers. */
export function outputFormat(value: string | undefined, allowed: readonly OutputFormat[], fallback: OutputFormat = 'table'): OutputFormat {
  const v = (value ?? fallback).toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`-o ${value}: expected one of ${allowed.join(', ')}`);
  return v as OutputFormat;
}

/** `-o json`: the API's objects unchanged (lists as arrays), two-space indented, one trailing newline. */
export const asJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
export const asYaml = (value: unknown): string => stringify(value, { lineWidth: 0 });

/** Machine formats (json/yaml) of `value`, or undefined for the human ones. */
export function machine(format: OutputFormat, value: unknown): string | undefined {
  if (format === 'json') return asJson(value);
  if (format === 'yaml') return asYaml(value);
  return undefined;
}

/** Shortens one line of free text to `max` characters for a table cell (full text in -o wide/json). */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `null` limits are "no limit". */
export const limitText = (n: number | null | undefined): string => (n === null || n === undefined ? 'none' : String(n));
