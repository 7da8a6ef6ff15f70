/**
 * Live quota usage per team and flavor, derived from running allocations (GET /v1/teams).
 *
 * - used      = Σ accelerators of the team's running/admitted jobs on the flavor;
 * - borrowed  = max(0, used − nominal);
 * - lent      = the part of the cohort's borrowing served by this team's idle lendable nominal. The
 *               cohort's total borrowing is attributed to lenders in team-name order, each up to its
 *               idle lendable amount (min(lendable, nominal − used));
 * - pendingDemand = accelerators (replicas × per replica) of the team's pending jobs, each counted on
 *               the first flavor it lists that the team has quota for (else its first flavor).
 * One row per Quota row, plus a row (nominal 0) for any flavor a team uses without quota.
 * Rows are sorted by team, then flavor.
 */
import type { Snapshot } from './model.js';
import { QuotaBook, type QuotaEntry, borrowedOf } from './quota.js';

export interface TeamFlavorUsage {
  team: string;
  flavor: string;
  nominal: number;
  borrowingLimit: number | null;
  lendingLimit: number | null;
  used: number;
  borrowed: number;
  lent: number;
  pendingDemand: number;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function teamUsage(snapshot: Pick<Snapshot, 'teams' | 'quotas' | 'running' | 'pending' | 'cohorts'>): TeamFlavorUsage[] {
  const teams = [...snapshot.teams].sort((a, b) => cmp(a.name, b.name));
  const quotas = [...snapshot.quotas].sort((a, b) => cmp(a.team, b.team) || cmp(a.flavor, b.flavor));
  const book = new QuotaBook(teams, quotas);
  const seen = new Set<string>();
  for (const r of snapshot.running) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    book.add(r.team, r.flavor, r.placement.reduce((s, p) => s + p.accelerators, 0));
  }
  const limits = new Map(quotas.map((q) => [`${q.team}\u0000${q.flavor}`, q]));

  // Lent: each cohort/flavor's borrowing, attributed to lenders in name order.
  const lent = new Map<QuotaEntry, number>();
  const byPool = new Map<unknown, QuotaEntry[]>();
  for (const e of book.all()) {
    if (e.pool === null) continue;
    const list = byPool.get(e.pool) ?? [];
    list.push(e);
    byPool.set(e.pool, list);
  }
  for (const members of byPool.values()) {
    members.sort((a, b) => cmp(a.team, b.team));
    let toAttribute = members.reduce((s, e) => s + borrowedOf(e), 0);
    for (const e of members) {
      const idleLendable = Math.max(0, Math.min(e.lendable, e.nominal - e.used));
      const share = Math.min(idleLendable, toAttribute);
      lent.set(e, share);
      toAttribute -= share;
    }
  }

  const demand = new Map<string, number>();
  for (const j of snapshot.pending) {
    const flavors = Array.isArray(j.flavors) ? j.flavors : [];
    const f = flavors.find((x) => limits.has(`${j.team}\u0000${x}`)) ?? flavors[0];
    if (f === undefined) continue;
    const k = `${j.team}\u0000${f}`;
    const amount = (Number(j.replicas) || 0) * (Number(j.acceleratorsPerReplica) || 0);
    demand.set(k, (demand.get(k) ?? 0) + amount);
  }

  return book
    .all()
    .sort((a, b) => cmp(a.team, b.team) || cmp(a.flavor, b.flavor))
    .map((e) => {
      const q = limits.get(`${e.team}\u0000${e.flavor}`);
      return {
        team: e.team,
        flavor: e.flavor,
        nominal: e.nominal,
        borrowingLimit: q?.borrowingLimit ?? (e.implicit ? 0 : null),
        lendingLimit: q?.lendingLimit ?? (e.implicit ? 0 : null),
        used: e.used,
        borrowed: borrowedOf(e),
        lent: lent.get(e) ?? 0,
        pendingDemand: demand.get(`${e.team}\u0000${e.flavor}`) ?? 0,
      };
    });
}
