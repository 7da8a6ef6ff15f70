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
import type { Quota, Snapshot, Team } from './model.js';
import { QuotaBook, type QuotaEntry, borrowedOf } from './quota.js';
import { maxAccelerators } from './roles.js';

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
  /** CPU (millicores) and memory (MiB) caps on the flavor's nodes (null = none), and what the team's replicas hold there. */
  cpuMillisLimit: number | null;
  memoryMiBLimit: number | null;
  cpuMillisUsed: number;
  memoryMiBUsed: number;
}

/** What live usage is computed from: no job specs, only what each job holds or asks for. */
export interface UsageInputs {
  teams: readonly Pick<Team, 'name' | 'cohort'>[];
  quotas: readonly Quota[];
  /** Accelerators held by jobs that hold an allocation, by team and flavor (entries of a pair add up). */
  held: readonly { team: string; flavor: string; accelerators: number; cpuMillis?: number; memoryMiB?: number }[];
  /**
   * Accelerators pending jobs ask for (replicas × per replica), with the flavors they accept, most
   * preferred first (entries of the same team and flavors add up).
   */
  demand: readonly { team: string; flavors: readonly string[]; accelerators: number }[];
}

/** The usage inputs of a scheduling snapshot: each running job's accelerators on its flavor, each pending job's ask. */
export function usageInputsOf(snapshot: Pick<Snapshot, 'teams' | 'quotas' | 'running' | 'pending'>): UsageInputs {
  return {
    teams: snapshot.teams,
    quotas: snapshot.quotas,
    held: snapshot.running.map((r) => ({
      team: r.team,
      flavor: r.flavor,
      accelerators: r.placement.reduce((s, p) => s + p.accelerators, 0),
      cpuMillis: r.placement.reduce((s, p) => s + p.cpuMillis, 0),
      memoryMiB: r.placement.reduce((s, p) => s + p.memoryMiB, 0),
    })),
    demand: snapshot.pending.map((j) => ({ team: j.team, flavors: j.flavors, accelerators: maxAccelerators(j) })),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function teamUsage(inputs: UsageInputs): TeamFlavorUsage[] {
  const teams = [...inputs.teams].sort((a, b) => cmp(a.name, b.name));
  const quotas = [...inputs.quotas].sort((a, b) => cmp(a.team, b.team) || cmp(a.flavor, b.flavor));
  const book = new QuotaBook(teams, quotas);
  for (const h of inputs.held) book.add(h.team, h.flavor, h.accelerators, h.cpuMillis ?? 0, h.memoryMiB ?? 0);
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
  for (const d of inputs.demand) {
    const f = d.flavors.find((x) => limits.has(`${d.team}\u0000${x}`)) ?? d.flavors[0];
    if (f === undefined) continue;
    const k = `${d.team}\u0000${f}`;
    demand.set(k, (demand.get(k) ?? 0) + d.accelerators);
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
        cpuMillisLimit: q?.cpuMillisLimit ?? null,
        memoryMiBLimit: q?.memoryMiBLimit ?? null,
        cpuMillisUsed: e.cpuUsed,
        memoryMiBUsed: e.memoryUsed,
      };
    });
}
