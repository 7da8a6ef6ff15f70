/**
 * Quantities of accelerators (and CPU millicores, memory MiB): non-negative safe integers, with an
 * UNLIMITED sentinel for "no limit" (a `null` limit in the model). Arithmetic saturates at UNLIMITED,
 * so `UNLIMITED + x = UNLIMITED` and `UNLIMITED − x = UNLIMITED`. No floating point is used.
 */
export type Amount = number;

/** "No limit". Larger than any real quantity; every helper below keeps it sticky. */
export const UNLIMITED: Amount = Number.MAX_SAFE_INTEGER;

/** A model limit (`null` = none) as an Amount. */
export function fromLimit(limit: number | null): Amount {
  return limit === null ? UNLIMITED : limit;
}

export function isUnlimited(a: Amount): boolean {
  return a >= UNLIMITED;
}

/** a + b, saturating at UNLIMITED. */
export function addAmount(a: Amount, b: Amount): Amount {
  if (isUnlimited(a) || isUnlimited(b)) return UNLIMITED;
  return Math.min(a + b, UNLIMITED);
}

/** a − b, never below zero; UNLIMITED − finite stays UNLIMITED. */
export function subAmount(a: Amount, b: Amount): Amount {
  if (isUnlimited(a)) return UNLIMITED;
  return Math.max(0, a - b);
}

export function minAmount(a: Amount, b: Amount): Amount {
  return a < b ? a : b;
}

/** Whole replicas of `perReplica` that fit in `amount` (UNLIMITED or perReplica 0 → `cap`). */
export function replicasWithin(amount: Amount, perReplica: number, cap: number): number {
  if (perReplica <= 0 || isUnlimited(amount)) return cap;
  return Math.min(cap, Math.floor(amount / perReplica));
}

export function formatAmount(a: Amount): string {
  return isUnlimited(a) ? 'unlimited' : String(a);
}

/** True for a non-negative safe integer (what every quantity in a snapshot must be). */
export function isQuantity(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}
