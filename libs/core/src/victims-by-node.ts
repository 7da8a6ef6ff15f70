/**
 * Preemption: a good sufficient victim set fast, for pools too large to search exhaustively
 * (victim-search.ts). Replica slots are bought node by node at the least lost work per slot — a node's
 * candidates, cheapest first, until the node gains a slot — inside each group of the job's grouping until
 * the group holds the job's replicas; the group where that costs least wins. Then the cheapest candidates
 * left cover what the job still lacks of quota. A borrowing team gives victims only while it borrows (all of
 * its victims but the largest within what it borrows). The full check is the caller's.
 */
import type { NodeGroup } from './cluster-state.js';
import type { CycleState } from './cycle-state.js';
import type { PreemptionRequest, Source } from './preemption-candidates.js';
import { SlotCount } from './slot-count.js';
import type { Candidate } from './victim-stream.js';

/** Most groups tried (those whose candidates hold the most accelerators the job can use). */
const MAX_GROUPS = 8;

export function victimsByNode(st: CycleState, p: PreemptionRequest, pool: readonly Candidate[], quotaGap: number): Candidate[] | undefined {
  const probe = new SlotCount(st, p);
  const onNode = new Map<number, Candidate[]>();
  const supply = new Map<NodeGroup, number>();
  for (const c of pool) {
    for (const r of c.h.replicas) {
      const groups = probe.groupsOf(r.node);
      if (groups.length === 0) continue;
      const list = onNode.get(r.node) ?? [];
      if (!list.includes(c)) list.push(c);
      onNode.set(r.node, list);
      for (const g of groups) supply.set(g, (supply.get(g) ?? 0) + r.a);
    }
  }
  for (const list of onNode.values()) list.sort((x, y) => x.cost - y.cost);
  const groups = [...supply.keys()].sort((x, y) => supply.get(y)! - supply.get(x)! || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)).slice(0, MAX_GROUPS);
  let best: { set: Candidate[]; cost: number } | undefined;
  if (probe.enough()) best = { set: [], cost: 0 };
  else {
    for (const g of groups) {
      const found = fillGroup(st, p, g, onNode);
      if (found !== undefined && (best === undefined || found.cost < best.cost)) best = found;
    }
  }
  if (best === undefined) return undefined;
  return coverQuota(best.set, pool, quotaGap);
}

/** Borrowing caps of the sources a set takes from: sum and largest victim per source. */
class Borrowing {
  private readonly sum = new Map<Source, number>();
  private readonly max = new Map<Source, number>();

  allows(c: Candidate): boolean {
    if (!c.source.crossTeam) return true;
    const sum = (this.sum.get(c.source) ?? 0) + c.acc;
    return sum - Math.max(this.max.get(c.source) ?? 0, c.acc) < c.source.borrowed;
  }

  take(c: Candidate): void {
    this.sum.set(c.source, (this.sum.get(c.source) ?? 0) + c.acc);
    this.max.set(c.source, Math.max(this.max.get(c.source) ?? 0, c.acc));
  }

  copy(): Borrowing {
    const b = new Borrowing();
    for (const [k, v] of this.sum) b.sum.set(k, v);
    for (const [k, v] of this.max) b.max.set(k, v);
    return b;
  }
}

/** Slots bought in group `g` at the least lost work per slot until it holds the job's replicas (`onNode` lists cheapest first). */
function fillGroup(st: CycleState, p: PreemptionRequest, g: NodeGroup, onNode: ReadonlyMap<number, Candidate[]>): { set: Candidate[]; cost: number } | undefined {
  const slots = new SlotCount(st, p);
  const borrowing = new Borrowing();
  const chosen = new Set<Candidate>();
  const nodes = [...onNode.keys()].filter((i) => slots.groupsOf(i).includes(g)).sort((x, y) => x - y);
  let cost = 0;
  // Each node's offer, recomputed only when a purchase touched the node (or changed what a borrower may give).
  const offers = new Map<number, Offer | undefined>();
  while (slots.slotsOf(g) < p.gang.minK) {
    let pick: Offer | undefined;
    for (const i of nodes) {
      if (!offers.has(i)) offers.set(i, offerOn(i, onNode.get(i)!, slots, chosen, borrowing));
      const offer = offers.get(i);
      if (offer !== undefined && (pick === undefined || offer.cost * pick.gain < pick.cost * offer.gain)) pick = offer;
    }
    if (pick === undefined) return undefined;
    for (const c of pick.buy) {
      chosen.add(c);
      borrowing.take(c);
      slots.add(c.h);
      cost += c.cost;
      if (c.source.crossTeam) offers.clear();
      for (const r of c.h.replicas) offers.delete(r.node);
    }
  }
  return { set: [...chosen], cost };
}

interface Offer {
  buy: Candidate[];
  cost: number;
  gain: number;
}

/** The cheapest candidates on node `i` (not chosen yet, within the borrowing caps) until it gains a slot. */
function offerOn(i: number, list: readonly Candidate[], slots: SlotCount, chosen: ReadonlySet<Candidate>, taken: Borrowing): Offer | undefined {
  const before = slots.slotsAt(i);
  const borrowing = taken.copy();
  const buy: Candidate[] = [];
  let cost = 0;
  let gain = 0;
  for (const c of list) {
    if (chosen.has(c) || !borrowing.allows(c)) continue;
    borrowing.take(c);
    buy.push(c);
    cost += c.cost;
    slots.add(c.h);
    gain = slots.slotsAt(i) - before;
    if (gain > 0) break;
  }
  for (const c of buy) slots.remove(c.h);
  return gain > 0 ? { buy, cost, gain } : undefined;
}

/** `set` plus the cheapest candidates of the pool until it frees the quota the job lacks. */
function coverQuota(set: Candidate[], pool: readonly Candidate[], quotaGap: number): Candidate[] | undefined {
  const borrowing = new Borrowing();
  let acc = 0;
  for (const c of set) {
    borrowing.take(c);
    acc += c.acc;
  }
  const inSet = new Set(set);
  for (const c of pool) {
    if (acc >= quotaGap) break;
    if (inSet.has(c) || !borrowing.allows(c)) continue;
    set.push(c);
    borrowing.take(c);
    acc += c.acc;
  }
  return acc >= quotaGap ? set : undefined;
}
