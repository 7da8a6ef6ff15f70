/**
 * Everything one cycle knows and mutates: node capacity (ClusterState), quota usage (QuotaBook),
 * fair-share usage, the jobs holding capacity (running, and admitted during this cycle), each flavor's
 * release timeline, and the reservations made so far. `hold` and `release` are exact inverses and the
 * only way capacity changes hands, so preemption can try victim sets and undo them.
 */
import { isQuantity } from './amount.js';
import { ClusterState } from './cluster-state.js';
import { FairShare } from './fair-share.js';
import { runtimeOn } from './flavor-selection.js';
import type { Flavor, JobSpec, RunningJob, Snapshot, Team } from './model.js';
import { QuotaBook } from './quota.js';
import { type HeldReplica, type Holding, cpuAndMemoryHeld } from './holding.js';
import { ReservationBook } from './reservation-book.js';
import { namesInOrder, sortedCopy, strictlyById } from './sorted-input.js';

export type { HeldReplica, Holding } from './holding.js';

/** A preemption attempt that failed: its request and standing. */
export interface FailedPreemption {
  a: number;
  c: number;
  m: number;
  minK: number;
  priority: number;
  submittedAt: number;
}

/** A team's possible victims on one flavor, in candidate order (priority ascending first). */
export interface VictimList {
  list: readonly Holding[];
  /** Entries before `start` were evicted for good. */
  start: number;
  /** prefix[i] = Σ accelerators of list[0..i). */
  prefix: number[];
  /** Entries evicted since the list was built (it is rebuilt when they pile up). */
  evicted: number;
}

/** Upper bound of the accelerators in `v` from `start` whose priority passes `below` (list sorted by priority). */
export function victimBound(v: VictimList, below: (priority: number) => boolean): number {
  let lo = v.start;
  let hi = v.list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (below(v.list[mid]!.job.priority)) lo = mid + 1;
    else hi = mid;
  }
  return v.prefix[lo]! - v.prefix[v.start]!;
}

/** The value of `map` at `key`, created by `make` when missing. */
function nested<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

/** Malformed figures in running placements count as zero. */
const qty = (n: number): number => (isQuantity(n) ? n : 0);

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const byId = <T extends { id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
export const tfKey = (team: string, flavor: string): string => `${team}\u0000${flavor}`;

/** A serving job that gives no runtime: it never ends by itself (JOB_KINDS), so its expected end is never. */
export function isEndless(job: JobSpec): boolean {
  return job.kind === 'serving' && job.expectedRuntimeSeconds === null;
}

/** When `job`, started at `start`, is expected to end (epoch ms): never for endless work, else expectedEnd. */
export function jobEnd(job: JobSpec, start: number, runtimeSeconds: number | null, defaultSeconds: number, now: number): number {
  return isEndless(job) ? Infinity : expectedEnd(start, runtimeSeconds, defaultSeconds, now);
}

/** Seconds → ms end time, from `start`; null runtime uses the default; never before `now`. */
export function expectedEnd(start: number, runtimeSeconds: number | null, defaultSeconds: number, now: number): number {
  const rt = runtimeSeconds ?? defaultSeconds;
  return Math.max(now, start + rt * 1000);
}

/**
 * Epoch ms of a running job's last checkpoint: as reported (`lastCheckpointAt`, within [admittedAt, now]),
 * else the last multiple of its checkpoint interval since admission, else its admission.
 */
export function lastCheckpoint(r: RunningJob, now: number): number {
  const admitted = r.admittedAt;
  const reported = r.lastCheckpointAt;
  if (typeof reported === 'number' && Number.isFinite(reported) && reported >= admitted && reported <= now) return reported;
  const interval = (r.checkpoint?.intervalSeconds ?? 0) * 1000;
  if (interval > 0 && Number.isFinite(interval) && now > admitted) return admitted + Math.floor((now - admitted) / interval) * interval;
  return admitted;
}

/**
 * Work a holding loses if preempted at `now`, in accelerator-ms: its accelerators × the time since its last
 * checkpoint (or its admission, for a job that does not checkpoint).
 */
export function lostWork(h: Holding, now: number): number {
  return h.accelerators * Math.max(0, now - h.checkpointAt);
}

export class CycleState {
  readonly now: number;
  readonly cluster: ClusterState;
  readonly quota: QuotaBook;
  readonly share: FairShare;
  readonly flavors = new Map<string, Flavor>();
  readonly teams = new Map<string, Team>();
  readonly reservations = new ReservationBook();
  private readonly byTeamFlavor = new Map<string, Map<string, Holding[]>>();
  /** Per flavor, its holdings by expected end; those of `unsorted` flavors are still in input order. */
  private readonly timelines = new Map<string, Holding[]>();
  private readonly unsorted = new Set<string>();
  private unmerged: Holding[] = [];
  private readonly shareListeners: ((team: string) => void)[] = [];
  private readonly sortedVictims = new Map<string, VictimList>();
  private readonly epochs = new Map<string, number>();
  /** Reservation requests that cannot fit even after every known job ends (reservations.ts). */
  readonly failedReservations = new Map<string, { count: number; minK: number }>();
  /** Preemption attempts that failed (preemptor.ts), by team, flavor and request shape. */
  readonly failedPreemptions = new Map<string, { epoch: number; failed: FailedPreemption[] }>();
  private readonly joinedKeys = new Map<string, Map<string, Map<string, string>>>();

  constructor(readonly snapshot: Snapshot) {
    this.now = snapshot.now;
    const flavors = sortedCopy(snapshot.flavors, byName, namesInOrder);
    const teams = sortedCopy(snapshot.teams, byName, namesInOrder);
    for (const f of flavors) if (!this.flavors.has(f.name)) this.flavors.set(f.name, f);
    for (const t of teams) if (!this.teams.has(t.name)) this.teams.set(t.name, t);
    const quotas = sortedCopy(
      snapshot.quotas,
      (a, b) => (a.team < b.team ? -1 : a.team > b.team ? 1 : 0) || (a.flavor < b.flavor ? -1 : a.flavor > b.flavor ? 1 : 0),
      (a, b) =>
        typeof a.team === 'string' && typeof b.team === 'string' && typeof a.flavor === 'string' && typeof b.flavor === 'string' &&
        (a.team < b.team || (a.team === b.team && !(a.flavor > b.flavor))),
    );
    this.cluster = new ClusterState(sortedCopy(snapshot.nodes, byName, namesInOrder), [...this.flavors.values()]);
    this.quota = new QuotaBook([...this.teams.values()], quotas);
    const capacity = new Map<string, number>();
    for (const f of this.flavors.keys()) capacity.set(f, this.cluster.flavor(f)?.fleetCapacity ?? 0);
    this.share = new FairShare(
      capacity,
      new Map([...this.teams.values()].map((t) => [t.name, t.fairShareWeight])),
    );
    // Running jobs: the first of duplicate ids (by a stable sort on id) wins; usage is commutative,
    // so without duplicates the input order does not matter and no sort is needed. Input sorted by
    // id (the usual) has none.
    const seen = new Set<string>();
    let running: readonly RunningJob[] = snapshot.running;
    let duplicates = false;
    for (const r of strictlyById(running) ? [] : running) {
      if (seen.has(r.id)) {
        // Copies of one id: the first by id, then by content (never by input order), is kept.
        const content = new Map(snapshot.running.map((j) => [j, JSON.stringify(j)]));
        running = [...snapshot.running].sort((a, b) => byId(a, b) || (content.get(a)! < content.get(b)! ? -1 : content.get(a)! > content.get(b)! ? 1 : 0));
        duplicates = true;
        break;
      }
      seen.add(r.id);
    }
    seen.clear();
    const defaultRuntime = snapshot.options.defaultExpectedRuntimeSeconds;
    const index = this.cluster.index;
    // What `hold` does to running work, without its per-call lookups (the last flavor's timeline is kept at hand).
    let tlFlavor: string | undefined;
    let tl: Holding[] | undefined;
    for (const r of running) {
      if (duplicates) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
      }
      const replicas: HeldReplica[] = [];
      let accelerators = 0;
      for (const p of r.placement ?? []) {
        accelerators += qty(p.accelerators);
        const node = index.get(p.node);
        if (node === undefined) continue;
        replicas.push({ node, a: qty(p.accelerators), c: qty(p.cpuMillis), m: qty(p.memoryMiB) });
      }
      const h: Holding = {
        job: r,
        flavor: r.flavor,
        replicas,
        accelerators,
        admittedAt: r.admittedAt,
        checkpointAt: lastCheckpoint(r, this.now),
        end: jobEnd(r, r.admittedAt, runtimeOn(r, r.flavor, this.flavors), defaultRuntime, this.now),
        admittedThisCycle: false,
        removed: false,
        // Every field set up front: one object shape for all holdings keeps property access fast.
        preempted: r.preempted,
        lastPreemptedAt: r.lastPreemptedAt,
        evicted: false,
        indexed: true,
      };
      for (const rep of replicas) this.cluster.take(rep.node, rep);
      let byFlavor = this.byTeamFlavor.get(r.team);
      if (byFlavor === undefined) {
        byFlavor = new Map();
        this.byTeamFlavor.set(r.team, byFlavor);
      }
      const list = byFlavor.get(h.flavor);
      if (list === undefined) byFlavor.set(h.flavor, [h]);
      else list.push(h);
      if (tl === undefined || h.flavor !== tlFlavor) {
        tlFlavor = h.flavor;
        tl = this.timelines.get(tlFlavor);
        if (tl === undefined) {
          tl = [];
          this.timelines.set(tlFlavor, tl);
        }
      }
      tl.push(h);
    }
    this.cluster.seal();
    // Timelines are sorted on first use (timeline()); usage per team and flavor is applied in one go.
    for (const f of this.timelines.keys()) this.unsorted.add(f);
    for (const [team, byFlavor] of this.byTeamFlavor) {
      for (const [flavor, list] of byFlavor) {
        let x = 0;
        let c = 0;
        let m = 0;
        for (const h of list) {
          x += h.accelerators;
          const held = cpuAndMemoryHeld(h.replicas);
          c += held.c;
          m += held.m;
        }
        this.quota.add(team, flavor, x, c, m);
        this.share.add(team, flavor, x);
      }
    }
  }

  /**
   * `${a}|${b}|${c}`, made once per cycle: a memo looked up with a fresh concatenation pays for
   * flattening and hashing it every time (~200 ns), with this string ~40 ns.
   */
  joinedKey(a: string, b: string, c: string): string {
    let byB = this.joinedKeys.get(a);
    if (byB === undefined) {
      byB = new Map();
      this.joinedKeys.set(a, byB);
    }
    let byC = byB.get(b);
    if (byC === undefined) {
      byC = new Map();
      byB.set(b, byC);
    }
    let k = byC.get(c);
    if (k === undefined) {
      k = `${a}|${b}|${c}`;
      byC.set(c, k);
    }
    return k;
  }

  /** Called with a team whenever its usage (and so its fair share) changes. */
  onShareChange(fn: (team: string) => void): void {
    this.shareListeners.push(fn);
  }

  /** Puts `h` on its nodes, quota and timeline (new admission, or undoing a tentative preemption). */
  hold(h: Holding): void {
    if (!h.removed) return;
    h.removed = false;
    for (const r of h.replicas) this.cluster.take(r.node, r);
    const { c, m } = cpuAndMemoryHeld(h.replicas);
    this.quota.add(h.job.team, h.flavor, h.accelerators, c, m);
    this.share.add(h.job.team, h.flavor, h.accelerators);
    if (h.indexed !== true) {
      h.indexed = true;
      const byFlavor = nested(this.byTeamFlavor, h.job.team, () => new Map<string, Holding[]>());
      const list = byFlavor.get(h.flavor);
      if (list === undefined) byFlavor.set(h.flavor, [h]);
      else list.push(h);
      let tl = this.timelines.get(h.flavor);
      if (tl === undefined) {
        tl = [];
        this.timelines.set(h.flavor, tl);
      }
      this.unmerged.push(h);
    }
    this.reservations.onHold(h);
    const e = this.quota.get(h.job.team, h.flavor);
    // More usage never helps a preemptor, except that a team starting to borrow becomes reclaimable.
    if (e !== undefined && e.used > e.nominal && e.used - h.accelerators <= e.nominal) this.bumpEpoch(h.flavor);
    for (const fn of this.shareListeners) fn(h.job.team);
  }

  /** Takes `h` off (preemption). Its entry stays in the lists, flagged removed, so `hold` can undo. */
  release(h: Holding): void {
    if (h.removed) return;
    h.removed = true;
    for (const r of h.replicas) this.cluster.give(r.node, r);
    const { c, m } = cpuAndMemoryHeld(h.replicas);
    this.quota.remove(h.job.team, h.flavor, h.accelerators, c, m);
    this.share.remove(h.job.team, h.flavor, h.accelerators);
    this.reservations.onRelease(h);
    this.bumpEpoch(h.flavor);
    for (const fn of this.shareListeners) fn(h.job.team);
  }

  /** Live holdings of `team` on `flavor`. */
  holdingsOf(team: string, flavor: string): Holding[] {
    return (this.byTeamFlavor.get(team)?.get(flavor) ?? []).filter((h) => !h.removed);
  }

  /**
   * Holdings of `team` on `flavor` present at snapshot time (the only possible preemption victims),
   * sorted once by `order`; entries may be flagged removed.
   */
  victimsOf(team: string, flavor: string, order: (x: Holding, y: Holding) => number): VictimList {
    const k = tfKey(team, flavor);
    let v = this.sortedVictims.get(k);
    if (v === undefined || (v.evicted > 32 && v.evicted * 4 > v.list.length)) {
      // Only work that can ever be a victim this cycle: preemptible, past the minimum runtime, not
      // admitted in this cycle, not evicted already.
      const minRuntimeMs = this.snapshot.options.minRuntimeBeforePreemptionSeconds * 1000;
      const source = v?.list ?? this.byTeamFlavor.get(team)?.get(flavor) ?? [];
      const list = source
        .filter((h) => !h.admittedThisCycle && h.evicted !== true && h.job.preemptible && this.now - h.admittedAt >= minRuntimeMs)
        .sort(order);
      const prefix = [0];
      for (const h of list) prefix.push(prefix[prefix.length - 1]! + h.accelerators);
      v = { list, start: 0, prefix, evicted: 0 };
      this.sortedVictims.set(k, v);
    }
    while (v.start < v.list.length && v.list[v.start]!.evicted === true) v.start++;
    return v;
  }

  /** Marks `h` as preempted for good (after a committed preemption). */
  evict(h: Holding): void {
    if (h.evicted === true) return;
    h.evicted = true;
    const v = this.sortedVictims.get(tfKey(h.job.team, h.flavor));
    if (v !== undefined) v.evicted++;
  }

  /**
   * Changes whenever capacity is released (preemption) or a team's usage of `flavor` grows: a
   * preemption attempt that failed at one epoch fails again for an equal or lesser request at the same epoch.
   */
  epoch(flavor: string): number {
    return this.epochs.get(flavor) ?? 0;
  }

  private bumpEpoch(flavor: string): void {
    this.epochs.set(flavor, this.epoch(flavor) + 1);
  }

  /** Undoes epoch bumps of a tentative change that was fully undone (preemptor.ts). */
  restoreEpoch(flavor: string, epoch: number): void {
    this.epochs.set(flavor, epoch);
  }

  /** Live holdings of `flavor` in order of expected end (then id). */
  timeline(flavor: string): readonly Holding[] {
    if (this.unmerged.length > 0) {
      // Admissions of this cycle join their flavors' timelines lazily (merged in order of end).
      const added = this.unmerged.sort(byEnd);
      this.unmerged = [];
      const byFlavor = new Map<string, Holding[]>();
      for (const h of added) {
        const list = byFlavor.get(h.flavor) ?? [];
        list.push(h);
        byFlavor.set(h.flavor, list);
      }
      for (const [f, list] of byFlavor) this.timelines.set(f, mergeByEnd(this.sortedTimeline(f) ?? [], list));
    }
    return this.sortedTimeline(flavor) ?? [];
  }

  /**
   * The holdings of `flavor` present at snapshot time, in no particular order (unlike `timeline`, no
   * sort): for scans whose outcome does not depend on the order.
   */
  holdingsOn(flavor: string): readonly Holding[] {
    return this.timelines.get(flavor) ?? [];
  }

  private sortedTimeline(flavor: string): Holding[] | undefined {
    const tl = this.timelines.get(flavor);
    if (tl !== undefined && this.unsorted.delete(flavor)) tl.sort(byEnd);
    return tl;
  }
}

/** By expected end (never-ending work last), then id. Compared, not subtracted: Infinity − Infinity is NaN. */
function byEnd(a: Holding, b: Holding): number {
  return a.end < b.end ? -1 : a.end > b.end ? 1 : a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0;
}

function mergeByEnd(a: readonly Holding[], b: readonly Holding[]): Holding[] {
  const out: Holding[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(byEnd(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
