/**
 * Exponential backoff: `base · 2^(attempt-1)`, capped at `max`. `attempt` is 1-based.
 * Integer milliseconds; attempt ≤ 0 is treated as 1.
 */
export function exponentialBackoffMs(attempt: number, baseMs: number, maxMs: number): number {
  if (!Number.isFinite(baseMs) || baseMs < 0) throw new RangeError(`baseMs must be ≥ 0, got ${baseMs}`);
  if (!Number.isFinite(maxMs) || maxMs < baseMs) throw new RangeError(`maxMs must be ≥ baseMs, got ${maxMs}`);
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  if (exponent >= 52) return maxMs;
  return Math.min(maxMs, baseMs * 2 ** exponent);
}
