/**
 * Quota arithmetic (one level of cohorts, Kueue-like). For team t and flavor f:
 *
 *   lendable_t   = min(lendingLimit ?? nominal, nominal)     part of t's nominal others may use when idle
 *   guaranteed_t = nominal − lendable_t                      part nobody else can ever use
 *   pool_f       = Σ_{t in cohort} lendable_t                the cohort's shared pool
 *   overflow_f   = Σ_{t in cohort} max(0, used_t − guaranteed_t)   what is drawn from the pool
 *
 * Team t may add x accelerators iff
 *   (1) used_t + x ≤ nominal_t + (borrowingLimit ?? ∞)      (no cohort: used_t + x ≤ nominal_t), and
 *   (2) the pool is not overdrawn by the change: the increase of overflow ≤ max(0, pool − overflow).
 * (2) lets a team always use its guaranteed part, even when a stale snapshot shows the pool overdrawn.
 * A team with no Quota row for a flavor cannot use it (NO_QUOTA); running work on such a flavor is still
 * counted (as an implicit zero quota) so that it occupies the pool.
 *
 * CPU and memory are capped on their own (Quota.cpuMillisLimit / memoryMiBLimit): the team's replicas on the
 * flavor's nodes — with or without accelerators — hold at most that much, never borrowed, never lent.
 */
import { UNLIMITED, addAmount, fromLimit, isUnlimited, minAmount, replicasWithin, subAmount } from './amount.js';
import type { Quota, Team } from './model.js';
import type { Accelerators, CpuMillis, MemoryMiB } from './quantity.js';

export interface CohortPool {
  cohort: string;
  flavor: string;
  pool: Accelerators;
  overflow: Accelerators;
}

export interface QuotaEntry {
  team: string;
  flavor: string;
  nominal: Accelerators;
  borrowingLimit: Accelerators;
  lendingLimit: Accelerators;
  lendable: Accelerators;
  guaranteed: Accelerators;
  used: Accelerators;
  /** Null when the team has no cohort. */
  pool: CohortPool | null;
  /** True when no Quota row exists (only running work put it here): pending jobs get NO_QUOTA. */
  implicit: boolean;
  /** CPU and memory caps (UNLIMITED when none) and what the team's replicas on the flavor hold of each. */
  cpuMillisLimit: CpuMillis;
  memoryMiBLimit: MemoryMiB;
  cpuUsed: CpuMillis;
  memoryUsed: MemoryMiB;
}

/** The resource of a CPU/memory cap a need would exceed. */
export type CappedResource = 'cpu' | 'memory';

export type QuotaVerdict =
  | { ok: true }
  | { ok: false; code: 'NO_QUOTA' | 'QUOTA_EXCEEDED' | 'COHORT_EXHAUSTED'; entry: QuotaEntry | undefined };

const key = (a: string, b: string): string => `${a}\u0000${b}`;

/** Over-the-guarantee part of a usage: what it draws from the cohort pool. */
function overflowOf(used: Accelerators, guaranteed: Accelerators): Accelerators {
  return used > guaranteed ? used - guaranteed : 0;
}

/** Most `e`'s team could ever hold of the flavor (its quota ceiling), regardless of current usage. */
export function quotaCeiling(e: QuotaEntry): Accelerators {
  if (e.pool === null) return e.nominal;
  return minAmount(addAmount(e.nominal, e.borrowingLimit), addAmount(e.guaranteed, e.pool.pool));
}

/** Largest x the team may add now (rules (1) and (2) above). */
export function maxAddable(e: QuotaEntry): Accelerators {
  if (e.implicit) return 0;
  if (e.pool === null) return subAmount(e.nominal, e.used);
  const byLimit = subAmount(addAmount(e.nominal, e.borrowingLimit), e.used);
  const idle = subAmount(e.pool.pool, e.pool.overflow);
  const byPool = addAmount(subAmount(e.guaranteed, e.used), idle);
  return minAmount(byLimit, byPool);
}

/**
 * What a job may add of `e`'s flavor now: `maxAddable`, and for a job that may not be preempted no more than
 * the team's nominal leaves — it never borrows, so what a team lends can always be reclaimed.
 */
export function maxAddableFor(e: QuotaEntry, preemptible: boolean): Accelerators {
  const m = maxAddable(e);
  return preemptible ? m : minAmount(m, subAmount(e.nominal, e.used));
}

/** The most a job's team could ever hold of the flavor for it: `quotaCeiling`, its nominal for a job that may not be preempted. */
export function quotaCeilingFor(e: QuotaEntry, preemptible: boolean): Accelerators {
  return preemptible ? quotaCeiling(e) : minAmount(quotaCeiling(e), e.nominal);
}

/**
 * How many accelerators must be given back (the team's own usage, or the cohort's overflow) before the team
 * may add `x`: `x − maxAddable` without maxAddable's floor at zero, so a team already over its quota (a
 * lowered nominal, or a stale snapshot) owes that excess too. ≤ 0 when it may add `x` now.
 */
export function quotaShortfall(e: QuotaEntry, x: Accelerators, preemptible = true): number {
  if (e.implicit) return x;
  const ownNominal = preemptible ? Infinity : e.nominal - e.used;
  if (e.pool === null) return x - (e.nominal - e.used);
  const byLimit = isUnlimited(e.borrowingLimit) ? Infinity : e.nominal + e.borrowingLimit - e.used;
  const byPool = Math.max(0, e.guaranteed - e.used) + (e.pool.pool - e.pool.overflow);
  return x - Math.min(byLimit, byPool, ownNominal);
}

/** Whole replicas of `c` CPU and `m` memory each (up to `cap`) the team's CPU and memory caps on `e`'s flavor leave room for. */
export function replicasWithinCaps(e: QuotaEntry, c: CpuMillis, m: MemoryMiB, cap: number): number {
  return Math.min(replicasWithin(subAmount(e.cpuMillisLimit, e.cpuUsed), c, cap), replicasWithin(subAmount(e.memoryMiBLimit, e.memoryUsed), m, cap));
}

/** The cap that adding `c` CPU and `m` memory would exceed now (CPU first), or undefined. */
export function capExceeded(e: QuotaEntry, c: CpuMillis, m: MemoryMiB): CappedResource | undefined {
  if (c > 0 && c > subAmount(e.cpuMillisLimit, e.cpuUsed)) return 'cpu';
  if (m > 0 && m > subAmount(e.memoryMiBLimit, e.memoryUsed)) return 'memory';
  return undefined;
}

/** The cap `c` CPU and `m` memory exceed even with nothing else held (CPU first), or undefined. */
export function capNeverMet(e: QuotaEntry, c: CpuMillis, m: MemoryMiB): CappedResource | undefined {
  if (c > e.cpuMillisLimit) return 'cpu';
  if (m > e.memoryMiBLimit) return 'memory';
  return undefined;
}

/** Accelerators the team uses above its nominal. */
export function borrowedOf(e: QuotaEntry): Accelerators {
  return subAmount(e.used, e.nominal);
}

/** Idle capacity of the cohort pool. */
export function cohortIdle(e: QuotaEntry): Accelerators {
  return e.pool === null ? 0 : subAmount(e.pool.pool, e.pool.overflow);
}

export class QuotaBook {
  private readonly entries = new Map<string, Map<string, QuotaEntry>>();
  private readonly ordered: QuotaEntry[] = [];
  private readonly pools = new Map<string, CohortPool>();
  private readonly cohortOf = new Map<string, string | null>();
  private readonly poolMembers = new Map<CohortPool, QuotaEntry[]>();
  private readonly sortedMembers = new Map<CohortPool, QuotaEntry[]>();

  /** `teams` and `quotas` must already be sorted (by name, then team/flavor) for determinism. */
  constructor(teams: readonly Pick<Team, 'name' | 'cohort'>[], quotas: readonly Quota[]) {
    for (const t of teams) this.cohortOf.set(t.name, t.cohort);
    for (const q of quotas) {
      if (!this.cohortOf.has(q.team) || this.get(q.team, q.flavor) !== undefined) continue;
      const e = this.create(q.team, q.flavor, q.nominal, fromLimit(q.borrowingLimit), fromLimit(q.lendingLimit), false);
      e.cpuMillisLimit = fromLimit(q.cpuMillisLimit ?? null);
      e.memoryMiBLimit = fromLimit(q.memoryMiBLimit ?? null);
    }
  }

  private create(
    team: string,
    flavor: string,
    nominal: Accelerators,
    borrowingLimit: Accelerators,
    lendingLimit: Accelerators,
    implicit: boolean,
  ): QuotaEntry {
    const cohort = this.cohortOf.get(team) ?? null;
    let pool: CohortPool | null = null;
    if (cohort !== null) {
      const pk = key(cohort, flavor);
      pool = this.pools.get(pk) ?? { cohort, flavor, pool: 0, overflow: 0 };
      this.pools.set(pk, pool);
    }
    const lendable = cohort === null ? 0 : minAmount(lendingLimit, nominal);
    const e: QuotaEntry = {
      team,
      flavor,
      nominal,
      borrowingLimit,
      lendingLimit,
      lendable,
      guaranteed: nominal - lendable,
      used: 0,
      pool,
      implicit,
      cpuMillisLimit: UNLIMITED,
      memoryMiBLimit: UNLIMITED,
      cpuUsed: 0,
      memoryUsed: 0,
    };
    if (pool !== null) pool.pool += lendable;
    let byFlavor = this.entries.get(team);
    if (byFlavor === undefined) {
      byFlavor = new Map();
      this.entries.set(team, byFlavor);
    }
    byFlavor.set(flavor, e);
    this.ordered.push(e);
    const members = pool === null ? undefined : this.poolMembers.get(pool);
    if (pool !== null) {
      if (members === undefined) this.poolMembers.set(pool, [e]);
      else members.push(e);
      this.sortedMembers.delete(pool);
    }
    return e;
  }

  get(team: string, flavor: string): QuotaEntry | undefined {
    return this.entries.get(team)?.get(flavor);
  }

  /** Every entry, in creation order (Quota rows sorted by team/flavor, then implicit ones). */
  all(): QuotaEntry[] {
    return [...this.ordered];
  }

  /** Whether `team` may add `x` of `flavor` now. */
  check(team: string, flavor: string, x: Accelerators): QuotaVerdict {
    const e = this.get(team, flavor);
    if (e === undefined || e.implicit) return { ok: false, code: 'NO_QUOTA', entry: e };
    if (x <= maxAddable(e)) return { ok: true };
    const byLimit = e.pool === null ? subAmount(e.nominal, e.used) : subAmount(addAmount(e.nominal, e.borrowingLimit), e.used);
    return { ok: false, code: x > byLimit ? 'QUOTA_EXCEEDED' : 'COHORT_EXHAUSTED', entry: e };
  }

  /** Records usage (running or newly admitted work): `x` accelerators, `c` CPU, `m` memory. Unknown teams are ignored. */
  add(team: string, flavor: string, x: Accelerators, c: CpuMillis = 0, m: MemoryMiB = 0): void {
    if (!this.cohortOf.has(team)) return;
    const e = this.get(team, flavor) ?? this.create(team, flavor, 0, 0, 0, true);
    this.setUsed(e, e.used + x);
    e.cpuUsed += c;
    e.memoryUsed += m;
  }

  remove(team: string, flavor: string, x: Accelerators, c: CpuMillis = 0, m: MemoryMiB = 0): void {
    const e = this.get(team, flavor);
    if (e === undefined) return;
    this.setUsed(e, Math.max(0, e.used - x));
    e.cpuUsed = Math.max(0, e.cpuUsed - c);
    e.memoryUsed = Math.max(0, e.memoryUsed - m);
  }

  private setUsed(e: QuotaEntry, used: Accelerators): void {
    if (e.pool !== null) e.pool.overflow += overflowOf(used, e.guaranteed) - overflowOf(e.used, e.guaranteed);
    e.used = used;
  }

  /** Teams of `cohort` (sorted by name) holding an entry for `flavor`. */
  members(cohort: string, flavor: string): readonly QuotaEntry[] {
    const pool = this.pools.get(key(cohort, flavor));
    if (pool === undefined) return [];
    let sorted = this.sortedMembers.get(pool);
    if (sorted === undefined) {
      sorted = [...(this.poolMembers.get(pool) ?? [])].sort((a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : 0));
      this.sortedMembers.set(pool, sorted);
    }
    return sorted;
  }
}

/**
 * What `maxAddable` would be for `e` if the usages changed by `delta` (team → accelerators released,
 * positive = less used). Used to evaluate quota at a future time (reservations) without mutating.
 */
export function maxAddableAfterRelease(e: QuotaEntry, releasedOwn: Accelerators, overflowDrop: Accelerators, preemptible = true): Accelerators {
  if (e.implicit) return 0;
  const used = Math.max(0, e.used - releasedOwn);
  const withinNominal = subAmount(e.nominal, used);
  if (e.pool === null) return withinNominal;
  const byLimit = subAmount(addAmount(e.nominal, e.borrowingLimit), used);
  const overflow = Math.max(0, e.pool.overflow - overflowDrop);
  const byPool = addAmount(subAmount(e.guaranteed, used), subAmount(e.pool.pool, overflow));
  const m = minAmount(byLimit, byPool);
  return preemptible ? m : minAmount(m, withinNominal);
}

/** Drop of the cohort overflow when a team using `used` (guaranteed `g`) releases `r`. */
export function overflowDropOnRelease(used: Accelerators, g: Accelerators, r: Accelerators): Accelerators {
  return overflowOf(used, g) - overflowOf(Math.max(0, used - r), g);
}

export { UNLIMITED };
