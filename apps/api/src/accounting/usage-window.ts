import { AppError, type FieldError } from '#common';
import { periodOf, USAGE_DIMENSIONS, type UsageDimension } from '#db';
import type { UsageQuery } from './accounting.dto.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
/** Most UTC days one request may list with groupBy=day. */
export const MAX_DAYS = 400;

export interface ParsedWindow {
  from: Date;
  to: Date;
  groupBy: UsageDimension[];
}

/** A query parameter that is a date (UTC midnight) or an RFC 3339 time; a bad one is added to `errors`. */
export function timeParam(field: string, raw: string, errors: FieldError[]): Date | undefined {
  const iso = DATE.test(raw) ? `${raw}T00:00:00Z` : RFC3339.test(raw) ? raw : null;
  const t = iso === null ? NaN : Date.parse(iso);
  if (Number.isNaN(t) || (DATE.test(raw) && new Date(t).toISOString().slice(0, 10) !== raw)) {
    errors.push({ field, message: 'must be a date (2026-11-01, UTC midnight) or an RFC 3339 time (2026-11-01T09:00:00Z)' });
    return undefined;
  }
  return new Date(t);
}

/** The window and grouping of GET /v1/usage, with every bad parameter named (400). */
export function parseUsageWindow(q: UsageQuery, now: Date): ParsedWindow {
  const errors: FieldError[] = [];
  const from = q.from === undefined ? periodOf('month', now).start : timeParam('from', q.from, errors);
  const to = q.to === undefined ? now : timeParam('to', q.to, errors);
  const groupBy: UsageDimension[] = [];
  for (const raw of (q.groupBy ?? 'team,flavor').split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!(USAGE_DIMENSIONS as readonly string[]).includes(raw)) errors.push({ field: 'groupBy', message: `'${raw.slice(0, 40)}' is not one of ${USAGE_DIMENSIONS.join(', ')}` });
    else if (!groupBy.includes(raw as UsageDimension)) groupBy.push(raw as UsageDimension);
  }
  if (groupBy.includes('day') && groupBy.includes('month')) errors.push({ field: 'groupBy', message: 'use at most one of day, month' });
  if (from !== undefined && to !== undefined) {
    if (from >= to) errors.push({ field: 'to', message: 'must be after from' });
    else if (groupBy.includes('day') && to.getTime() - from.getTime() > MAX_DAYS * 86_400_000) {
      errors.push({ field: 'to', message: `with groupBy day, the window may span at most ${MAX_DAYS} days (use month)` });
    }
  }
  if (errors.length > 0 || from === undefined || to === undefined) {
    throw new AppError('VALIDATION_FAILED', `invalid parameter${errors.length === 1 ? '' : 's'}: ${errors.map((e) => e.field).join(', ')}`, errors);
  }
  return { from, to, groupBy };
}
