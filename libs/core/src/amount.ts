import type { Quantity, Unit } from './quantity.js';

/**
 * Quantities of accelerators (and CPU millicores, memory MiB): non-negative safe integers, with an
 * UNLIMITED sentinel for "no limit" (a `null` limit in the model). Arithmetic saturates at UNLIMITED,
 * so `UNLIMITED + x = UNLIMITED` and `UNLIMITED − x = UNLIMITED`. No floating point is used.
 * Each helper keeps its operands' unit (quantity.ts): both operands are of one unit, and so is the result.
 */
export type Amount<U extends Unit = Unit> = Quantity<U>;

/** "No limit". Larger than any real quantity; every helper below keeps it sticky. A plain number: any unit. */
export const UNLIMITED: number = Number.MAX_SAFE_INTEGER;

/** A model limit (`null` = none) as an Amount. */
export function fromLimit<U extends Unit = never>(limit: Quantity<U> | null): Quantity<U> {
  return limit === null ? UNLIMITED : limit;
}

export function isUnlimited(a: number): boolean {
  return a >= UNLIMITED;
}

/** a + b, saturating at UNLIMITED. */
export function addAmount<U extends Unit = never>(a: Quantity<U>, b: NoInfer<Quantity<U>>): Quantity<U> {
  if (isUnlimited(a) || isUnlimited(b)) return UNLIMITED;
  return Math.min(a + b, UNLIMITED);
}

/** a − b, never below zero; UNLIMITED − finite stays UNLIMITED. */
export function subAmount<U extends Unit = never>(a: Quantity<U>, b: NoInfer<Quantity<U>>): Quantity<U> {
  if (isUnlimited(a)) return UNLIMITED;
  return Math.max(0, a - b);
}

export function minAmount<U extends Unit = never>(a: Quantity<U>, b: NoInfer<Quantity<U>>): Quantity<U> {
  return a < b ? a : b;
}

/** Whole replicas of `perReplica` that fit in `amount` (UNLIMITED or perReplica 0 → `cap`). */
export function replicasWithin<U extends Unit = never>(amount: Quantity<U>, perReplica: NoInfer<Quantity<U>>, cap: number): number {
  if (perReplica <= 0 || isUnlimited(amount)) return cap;
  return Math.min(cap, Math.floor(amount / perReplica));
}

export function formatAmount(a: number): string {
  return isUnlimited(a) ? 'unlimited' : String(a);
}

/** True for a non-negative safe integer (what every quantity in a snapshot must be). */
export function isQuantity(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}
