/**
 * Preemption, step 2: the cheapest sufficient set of victims (preemptor.ts runs the steps).
 *
 * Of the sets of candidates (preemption-candidates.ts: the victims the policies allow) with which the job
 * fits — quota, reservations and placement on the nodes it can use — the chosen one is, in this order:
 *   1. the one whose highest victim priority is lowest: a job is a victim only when the candidates of lower
 *      priority cannot make room together;
 *   2. one without a gang of more than OVERSIZED_FACTOR × the shortfall, when such a set exists (the
 *      shortfall: the accelerators the job lacks in its best group of nodes, or in its quota, whichever is
 *      more): a job short of one accelerator never evicts a multi-node gang while smaller gangs would do;
 *   3. the least lost work: Σ accelerators × (now − its last checkpoint, or its admission);
 *   4. the fewest accelerators freed, so the fewest beyond the shortfall; 5. the fewest victims.
 * A borrowing team gives victims only while it borrows: all of its victims but the largest fit strictly
 * within what it borrows (so a reclaim takes no more from it than it borrowed, but for its last gang).
 *
 * Per priority tier, the candidates are read in order of lost work (victim-stream.ts) into a pool that
 * grows until its candidates together could make room. A pool of at most EXACT_POOL candidates is searched
 * exhaustively (`search`: a depth-first branch and bound; a branch ends when its lost work passes the best
 * set's, or when what is left of the pool cannot make room; a set is checked in full, `VictimFit`, only
 * when a count of replica slots says it could fit, `SlotCount`); its best is the tier's best once it loses
 * less work than the next candidate alone, else the pool doubles. A larger pool gets a good set by buying
 * slots node by node (victims-by-node.ts), improved by the exhaustive search of its cheapest EXACT_POOL;
 * such an answer, like one cut short by SEARCH_STEPS or SEARCH_FULL_CHECKS, is marked inexact (the caller
 * then spares every victim the job does not need). Among sets equal by all five, the first the search meets
 * is kept (deterministic, as its order is).
 */
import type { CycleState, Holding } from './cycle-state.js';
import { type PreemptionRequest, type Source, compareCandidates } from './preemption-candidates.js';
import type { VictimFit } from './preemption-fit.js';
import { quotaShortfall } from './quota.js';
import { SlotCount } from './slot-count.js';
import { type Candidate, TierStream, priorityTiers, tierBound } from './victim-stream.js';
import { victimsByNode } from './victims-by-node.js';

/**
 * A gang of more than this many times the shortfall is a victim only when no set of smaller gangs suffices.
 * Measured on the contended Philly replay (docs/adr/0021): factor 2 threw away 16,412 GPU-hours where no
 * such rule threw away 2,270 (young large gangs lose little, old small jobs a lot), 4 gave 4,928 and 8
 * 2,433, with the same mean wait and the same longest wait of gangs ≥ 32 GPUs.
 */
export const OVERSIZED_FACTOR = 8;

/** Pools up to this many candidates are searched exhaustively. */
export const EXACT_POOL = 12;
/** A pool too large to search exhaustively is read to this many candidates (more if they cannot make room). */
export const MAX_POOL = 256;
/** Candidates tried by one exhaustive search before it settles. */
export const SEARCH_STEPS = 20_000;
/** Candidates tried when the cheapest of a large pool are searched for a set better than the one bought by node. */
export const IMPROVE_STEPS = 200;
/** Full checks (quota, reservations, placement) of one preemption attempt before it settles. */
export const SEARCH_FULL_CHECKS = 64;

export interface VictimSet {
  /** The victims, smallest first (then in candidate order), released on the cycle state. */
  victims: Holding[];
  /** False when no exhaustive search covered every candidate that could matter: a cheaper set may exist. */
  exact: boolean;
}

interface Found {
  set: Candidate[];
  cost: number;
  acc: number;
}

/** What one attempt's searches share. */
interface Attempt {
  st: CycleState;
  p: PreemptionRequest;
  fit: VictimFit;
  /** Accelerators the job lacks in its best node group, and in its quota (≤ 0: none). */
  capacityGap: number;
  quotaGap: number;
  checks: number;
  exact: boolean;
}

/**
 * The cheapest sufficient victim set of `p` among the sources' candidates, released on the cycle state;
 * undefined (nothing released) when no set lets the job fit.
 */
export function cheapestVictimSet(st: CycleState, p: PreemptionRequest, sources: readonly Source[], fit: VictimFit): VictimSet | undefined {
  const slots = new SlotCount(st, p);
  const quotaGap = quotaShortfall(p.quota, p.need, p.job.preemptible);
  const capacityGap = p.need - slots.bestFree();
  const shortfall = Math.max(1, capacityGap, quotaGap);
  const at: Attempt = { st, p, fit, capacityGap, quotaGap, checks: 0, exact: true };
  const stream = (tier: number, keep: (h: Holding) => boolean): TierStream => new TierStream(st, p, slots, quotaGap, sources, tier, keep);
  for (const tier of priorityTiers(sources)) {
    // Even every candidate up to this priority could not free what is missing.
    if (tierBound(sources, tier) < Math.max(capacityGap, quotaGap)) continue;
    const found =
      searchTier(at, stream(tier, (h) => h.accelerators <= OVERSIZED_FACTOR * shortfall)) ?? searchTier(at, stream(tier, () => true));
    if (found !== undefined) {
      // Smallest first, so that each borrowing team's largest victim comes last: the team still borrows
      // before each of its victims is taken, in the order the preemptions are listed.
      const victims = found.set.map((c) => c.h).sort((x, y) => x.accelerators - y.accelerators || compareCandidates(x, y, st.now));
      for (const h of victims) st.release(h);
      return { victims, exact: at.exact };
    }
  }
  return undefined;
}

/** The cheapest set among the candidates of one tier (see the header). */
function searchTier(at: Attempt, stream: TierStream): Found | undefined {
  const pool: Candidate[] = [];
  const together = new SlotCount(at.st, at.p);
  let usable = 0;
  let acc = 0;
  let best: Found | undefined;
  let target = EXACT_POOL;
  const couldSuffice = (): boolean => usable >= at.capacityGap && acc >= at.quotaGap && together.enough();
  for (;;) {
    while (pool.length < target || !couldSuffice()) {
      const c = stream.next();
      if (c === undefined) break;
      pool.push(c);
      together.add(c.h);
      usable += c.usable;
      acc += c.acc;
    }
    // The stream ran out before the pool could make room.
    if (!couldSuffice()) return best;
    const more = stream.peek() !== undefined;
    if (pool.length <= EXACT_POOL) {
      best = search(at, pool, best);
      // A set with a candidate not read yet loses at least that candidate's work.
      if (!more || (best !== undefined && best.cost < stream.peek()!.cost)) return best;
      target = MAX_POOL;
      continue;
    }
    if (pool.length < Math.max(target, MAX_POOL) && more) {
      // Past an exhaustive search's size: read what a good set is likely among before buying slots.
      target = Math.max(target, MAX_POOL);
      continue;
    }
    at.exact = false;
    const quick = victimsByNode(at.st, at.p, pool, at.quotaGap);
    if (quick !== undefined && fullCheck(at, quick)) {
      const found = summed(quick);
      if (best === undefined || better(found.cost, found.acc, found.set.length, best)) best = found;
    }
    best = search(at, pool.slice(0, EXACT_POOL), best, IMPROVE_STEPS);
    if (best !== undefined || !more) return best;
    target = pool.length * 2;
  }
}

function summed(set: Candidate[]): Found {
  let cost = 0;
  let acc = 0;
  for (const c of set) {
    cost += c.cost;
    acc += c.acc;
  }
  return { set, cost, acc };
}

/** The cheapest sufficient set within `pool` (sorted by lost work), by the order in the header; `best` bounds it. */
function search(at: Attempt, pool: readonly Candidate[], best: Found | undefined, maxSteps = SEARCH_STEPS): Found | undefined {
  const n = pool.length;
  const sufUsable = new Array<number>(n + 1).fill(0);
  const sufAcc = new Array<number>(n + 1).fill(0);
  for (let j = n - 1; j >= 0; j--) {
    sufUsable[j] = sufUsable[j + 1]! + pool[j]!.usable;
    sufAcc[j] = sufAcc[j + 1]! + pool[j]!.acc;
  }
  // What the chosen set and the candidates not passed over could free together (built when first needed: the
  // whole pool could make room, so while nothing is passed over it can).
  const passedOver: Candidate[] = [];
  let open: SlotCount | undefined;
  const openEnough = (): boolean => {
    if (passedOver.length === 0) return true;
    if (open === undefined) {
      open = new SlotCount(at.st, at.p);
      for (const c of pool) open.add(c.h);
      for (const c of passedOver) open.remove(c.h);
    }
    return open.enough();
  };
  const chosenSlots = new SlotCount(at.st, at.p);
  const teamSum = new Map<Source, number>();
  const teamMax = new Map<Source, number>();
  const chosen: Candidate[] = [];
  let cost = 0;
  let acc = 0;
  let usable = 0;
  let steps = 0;
  let stopped = false;

  const dfs = (start: number): void => {
    let passed = 0;
    for (let j = start; j < n; j++) {
      if (++steps > maxSteps) {
        stopped = true;
        break;
      }
      const c = pool[j]!;
      // Every later candidate loses at least as much work as this one.
      if (best !== undefined && cost + c.cost > best.cost) break;
      // Even all the candidates left could not make room.
      if (usable + sufUsable[j]! < at.capacityGap || acc + sufAcc[j]! < at.quotaGap || !openEnough()) break;
      // Only strictly better sets are looked for: equal lost work must free fewer accelerators, or as many with fewer victims.
      const tie = best !== undefined && cost + c.cost === best.cost && (acc + c.acc > best.acc || (acc + c.acc === best.acc && chosen.length + 1 >= best.set.length));
      const src = c.source;
      const maxBefore = teamMax.get(src) ?? 0;
      // A borrowing team would stop borrowing before its last victim is taken.
      const overBorrowed = src.crossTeam && (teamSum.get(src) ?? 0) + c.acc - Math.max(maxBefore, c.acc) >= src.borrowed;
      if (!tie && !overBorrowed) {
        if (src.crossTeam) {
          teamSum.set(src, (teamSum.get(src) ?? 0) + c.acc);
          teamMax.set(src, Math.max(maxBefore, c.acc));
        }
        chosen.push(c);
        cost += c.cost;
        acc += c.acc;
        usable += c.usable;
        chosenSlots.add(c.h);
        if (acc >= at.quotaGap && usable >= at.capacityGap && chosenSlots.enough() && fullCheck(at, chosen)) {
          if (best === undefined || better(cost, acc, chosen.length, best)) best = { set: [...chosen], cost, acc };
        } else if (at.checks <= SEARCH_FULL_CHECKS) {
          dfs(j + 1);
        } else {
          stopped = true;
        }
        chosenSlots.remove(c.h);
        chosen.pop();
        cost -= c.cost;
        acc -= c.acc;
        usable -= c.usable;
        if (src.crossTeam) {
          teamSum.set(src, teamSum.get(src)! - c.acc);
          teamMax.set(src, maxBefore);
        }
        if (stopped) break;
      }
      // From here on this frame passes over c.
      open?.remove(c.h);
      passedOver.push(c);
      passed++;
    }
    for (; passed > 0; passed--) {
      const c = passedOver.pop()!;
      open?.add(c.h);
    }
  };
  dfs(0);
  if (stopped) at.exact = false;
  return best;
}

/** Whether the job fits with every one of `set` released (a full check; everything is held again after). */
function fullCheck(at: Attempt, set: readonly Candidate[]): boolean {
  at.checks++;
  const hs = set.map((c) => c.h);
  for (const h of hs) at.st.release(h);
  const ok = at.fit.fits(hs);
  for (let i = hs.length - 1; i >= 0; i--) at.st.hold(hs[i]!);
  return ok;
}

/** Whether a set is better than `best`: less lost work, then fewer accelerators freed, then fewer victims. */
function better(cost: number, acc: number, count: number, best: Found): boolean {
  return cost < best.cost || (cost === best.cost && (acc < best.acc || (acc === best.acc && count < best.set.length)));
}
