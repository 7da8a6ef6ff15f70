import { AppError } from '#common';
import { UUID } from '#db';

/** Opaque keyset cursor over (submittedAt, id), newest first. */
export interface JobCursor {
  submittedAt: Date;
  id: string;
}

export function encodeCursor(c: JobCursor): string {
  return Buffer.from(JSON.stringify([c.submittedAt.toISOString(), c.id])).toString('base64url');
}

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

export function decodeCursor(raw: string): JobCursor {
  const invalid = (): AppError =>
    new AppError('VALIDATION_FAILED', 'invalid cursor', [{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') throw invalid();
  const submittedAt = new Date(parsed[0]);
  // A Date may lie outside what Postgres timestamps hold (4713 BC to 294276 AD): such a cursor came from
  // no page of this API.
  const t = submittedAt.getTime();
  if (Number.isNaN(t) || t < EARLIEST || t > LATEST || !UUID.test(parsed[1])) throw invalid();
  return { submittedAt, id: parsed[1] };
}
