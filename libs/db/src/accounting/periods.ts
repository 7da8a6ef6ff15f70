/** Budget periods in UTC: a day, an ISO week (Monday 00:00), a calendar month. */
export type PeriodKind = 'day' | 'week' | 'month';
export const PERIOD_KINDS: readonly PeriodKind[] = ['day', 'week', 'month'];

export interface PeriodBounds {
  start: Date;
  /** Exclusive: the start of the next period. */
  end: Date;
  /** `2026-11-30`, `2026-W48`, `2026-11`. */
  label: string;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** The period of kind `kind` that contains `at`. */
export function periodOf(kind: PeriodKind, at: Date): PeriodBounds {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (kind) {
    case 'day': {
      const start = new Date(Date.UTC(y, m, d));
      return { start, end: new Date(Date.UTC(y, m, d + 1)), label: `${y}-${pad(m + 1)}-${pad(d)}` };
    }
    case 'week': {
      const weekday = (at.getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
      const start = new Date(Date.UTC(y, m, d - weekday));
      // ISO week number: the week with the year's first Thursday is week 1.
      const thursday = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 3));
      const isoYear = thursday.getUTCFullYear();
      const week = Math.floor((thursday.getTime() - Date.UTC(isoYear, 0, 1)) / 86_400_000 / 7) + 1;
      return { start, end: new Date(Date.UTC(y, m, d - weekday + 7)), label: `${isoYear}-W${pad(week)}` };
    }
    case 'month':
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)), label: `${y}-${pad(m + 1)}` };
  }
}
