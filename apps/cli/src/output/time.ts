/**
 * Times and durations as people read them: local time with its zone (the process's TZ), durations in
 * words ("2 h 10 min"). Pure functions of their inputs: the clock and the zone are parameters.
 */

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** `2 h 10 min`, `45 s`, `3 d 4 h`: the two largest units, rounded down (`2 h`, not `2 h 0 min`); `0 s` below a second. */
export function durationWords(ms: number): string {
  let rest = Math.max(0, Math.floor(ms));
  const i = UNITS.findIndex(([size]) => rest >= size);
  if (i < 0) return '0 s';
  const [size, unit] = UNITS[i]!;
  const n = Math.floor(rest / size);
  rest -= n * size;
  const out = [`${n} ${unit}`];
  const next = UNITS[i + 1];
  if (next !== undefined && rest >= next[0]) out.push(`${Math.floor(rest / next[0])} ${next[1]}`);
  return out.join(' ');
}

function parts(ms: number, timeZone: string | undefined): Record<string, string> {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  });
  const out: Record<string, string> = {};
  for (const p of fmt.formatToParts(new Date(ms))) out[p.type] = p.value;
  return out;
}

export interface TimeOptions {
  /** IANA zone; default: the process's (TZ). */
  timeZone?: string;
  /** Show seconds (state changes followed live). */
  seconds?: boolean;
}

/** `14:32 UTC` when `ms` falls on the same local day as `now`, else `2026-12-01 14:32 UTC`. */
export function localTime(ms: number, now: number, options: TimeOptions = {}): string {
  const p = parts(ms, options.timeZone);
  const today = parts(now, options.timeZone);
  const clock = `${p.hour}:${p.minute}${options.seconds ? `:${p.second}` : ''} ${p.timeZoneName}`;
  const sameDay = p.year === today.year && p.month === today.month && p.day === today.day;
  return sameDay ? clock : `${p.year}-${p.month}-${p.day} ${clock}`;
}

/** Always with the date: `2026-12-01 14:32:05 UTC`. */
export function localDateTime(ms: number, options: TimeOptions = {}): string {
  const p = parts(ms, options.timeZone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
}

/** `in about 2 h 10 min (14:32 UTC)`, or `any moment now (14:32 UTC)` when it is due. */
export function startsIn(startMs: number, now: number, options: TimeOptions = {}): string {
  const when = localTime(startMs, now, options);
  return startMs - now < 60_000 ? `any moment now (${when})` : `in about ${durationWords(startMs - now)} (${when})`;
}

/** `3 min ago`-style age in words, for the AGE column: `3 min`. */
export function age(sinceMs: number, now: number): string {
  return durationWords(now - sinceMs);
}

export const parseTime = (iso: string | null | undefined): number | null => {
  if (iso === null || iso === undefined) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
};

/** `in 13 min`, `in 2 h 10 min`, or `any moment now` when it is due (within a minute, or past). */
export function inWords(ms: number, now: number): string {
  return ms - now < 60_000 ? 'any moment now' : `in ${durationWords(ms - now)}`;
}

/** A start time in a table cell: `14:32 UTC (in 13 min)`, with the date when it is not today. */
export function startCell(ms: number, now: number, options: TimeOptions = {}): string {
  return `${localTime(ms, now, options)} (${inWords(ms, now)})`;
}
