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

/**
 * "2 × 8 = 16"; a multi-role gang's roles one by one, "1 × 0 + 2 × 8 = 16" (its top-level figures are only the
 * roles' envelope: summed replicas times the largest role's accelerators, ADR 0024).
 */
export function size(j: {
  replicas: number;
  acceleratorsPerReplica: number;
  roles?: { replicas: number; acceleratorsPerReplica: number }[] | null;
}): string {
  const parts = j.roles && j.roles.length > 0 ? j.roles : [j];
  const total = parts.reduce((s, r) => s + r.replicas * r.acceleratorsPerReplica, 0);
  return `${parts.map((r) => `${r.replicas} × ${r.acceleratorsPerReplica}`).join(' + ')} = ${num(total)}`;
}

/** CPU in cores from millicores: "8 CPU", "0.5 CPU". */
export const cpu = (millis: number): string =>
  `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 }).format(millis / 1000)} CPU`;

/** Memory from MiB: "64 GiB" when whole gibibytes, else "1,536 MiB". */
export const memory = (mib: number): string =>
  mib >= 1024 && mib % 1024 === 0 ? `${num(mib / 1024)} GiB` : `${num(mib)} MiB`;

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
