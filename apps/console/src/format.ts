/** Plain-words labels and number/time formats shared by the pages. */

/** What each pending reason code means, for people (the API's message gives the figures). */
export const REASONS: Record<string, string> = {
  QUOTA_EXCEEDED: 'Team quota is used up',
  COHORT_EXHAUSTED: 'Nothing left to borrow in the cohort',
  NO_QUOTA: 'Team has no quota for these accelerators',
  INSUFFICIENT_CAPACITY: 'Not enough free accelerators',
  TOPOLOGY_UNSATISFIABLE: 'No free block/zone/domain fits the topology it asks for',
  BLOCKED_BY_RESERVATION: 'Waiting behind a larger job’s reservation',
  ADMISSION_LIMIT: 'Per-cycle admission limit reached',
  UNSATISFIABLE: 'Can never fit this cluster as asked',
  INVALID: 'Invalid request',
  BUDGET_EXHAUSTED: 'Team budget for this period is used up',
};

export const reasonLabel = (code: string | null): string =>
  code === null ? 'Waiting for the next scheduling cycle' : (REASONS[code] ?? code);

export const STATE_LABELS: Record<string, string> = {
  PENDING: 'Pending',
  ADMITTED: 'Admitted',
  BINDING: 'Binding',
  RUNNING: 'Running',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
  PREEMPTED: 'Preempted',
};

export const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

const nf = new Intl.NumberFormat('en-US');
export const num = (n: number): string => nf.format(n);

export const money = (n: number): string =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 }).format(n);

/** "3 h 12 min", "45 s": a duration in words, two units at most. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** "in 12 min" / "5 min ago", relative to now. */
export function relative(iso: string, now = Date.now()): string {
  const diff = new Date(iso).getTime() - now;
  return diff >= 0 ? `in ${duration(diff)}` : `${duration(-diff)} ago`;
}

/** Local date and time, minutes precision, e.g. "Nov 30, 14:05". */
export function when(iso: string): string {
  return new Date(iso).toLocaleString('en-US', {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  });
}

export const clock = (d: Date): string => d.toLocaleTimeString('en-US', { hour12: false });

export const size = (j: { replicas: number; acceleratorsPerReplica: number }): string =>
  `${j.replicas} × ${j.acceleratorsPerReplica} = ${num(j.replicas * j.acceleratorsPerReplica)}`;

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
export const COLORS = {
  blue: '#0072B2',
  orange: '#E69F00',
  green: '#009E73',
  vermillion: '#D55E00',
  sky: '#56B4E9',
  purple: '#CC79A7',
  yellow: '#F0E442',
  grey: '#8a8f98',
  black: '#1d1f23',
};
