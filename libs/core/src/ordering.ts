/**
 * The order in which one cycle considers pending jobs. Most important first:
 *
 *   1. priority, higher first;
 *   2. the team's weighted dominant share (fair-share.ts), lower first — recomputed after every
 *      admission and preemption, so a team that just got capacity yields to the others;
 *   3. submittedAt, earlier first (a requeued preempted job keeps its original place);
 *      with `options.ordering: 'shortest-first'`, the aged expected work first (agedWork, lower
 *      first), then submittedAt;
 *   4. id, lexicographically (the deterministic tie-break).
 *
 * `shortest-first` is shortest-job-first with aging (Brinch Hansen's highest response ratio next): a
 * job's key is its expected accelerator-seconds w = accelerators × runtime divided by its response
 * ratio (waited + runtime) ÷ runtime. Among jobs that just arrived the least work goes first, which
 * cuts mean completion time when short jobs would otherwise queue behind long gangs; a job's key falls
 * the longer it waits (to half once it has waited its own runtime, towards 0 after), so no job waits
 * forever behind a stream of shorter ones. The runtime is the job's `expectedRuntimeSeconds` (for a
 * requeued job the remaining work, as its executor reports it) or the default runtime when unknown;
 * waited = now − submittedAt. Both policies it is compared with in bench:sim use it alike.
 *
 * Within one team criterion 2 is constant, so each team's jobs are sorted once (1, 3, 4); a heap over
 * the teams' head jobs, keyed by all four criteria, picks the next job. A team whose share changes is
 * re-keyed (stale heap entries are skipped), so a cycle costs O(jobs · log teams).
 */
import type { PendingJob } from './model.js';
import { minAccelerators } from './roles.js';

const cmpStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Criteria 1, 3, 4. */
export function compareWithinTeam(a: PendingJob, b: PendingJob): number {
  return b.priority - a.priority || a.submittedAt - b.submittedAt || cmpStr(a.id, b.id);
}

/** How a cycle orders jobs of equal priority within a team (criterion 3). */
export type QueueOrdering = { kind: 'fifo' } | { kind: 'shortest-first'; now: number; defaultRuntimeSeconds: number };

/**
 * `shortest-first`'s key: expected accelerator-seconds ÷ response ratio (lower first). Malformed
 * figures (the cycle marks such jobs INVALID) get the largest key, so the order never depends on them.
 */
export function agedWork(job: PendingJob, now: number, defaultRuntimeSeconds: number): number {
  const runtime = job.expectedRuntimeSeconds ?? defaultRuntimeSeconds;
  const work = minAccelerators(job) * runtime;
  const waited = Math.max(0, (now - job.submittedAt) / 1000);
  if (!(work >= 0 && runtime >= 0 && Number.isFinite(work) && Number.isFinite(waited))) return Number.MAX_VALUE;
  return runtime + waited > 0 ? (work * runtime) / (runtime + waited) : 0;
}

const cmpNum = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Whether `sort(cmp)` would leave `jobs` as they are: no job compares below the one before it, so the
 * array is one ascending run (what the sort checks first). Jobs handed over by id often are in
 * order within their team already (FIFO: id order follows submission).
 */
function oneRun(jobs: readonly PendingJob[], cmp: (a: PendingJob, b: PendingJob) => number): boolean {
  for (let i = 1; i < jobs.length; i++) if (cmp(jobs[i]!, jobs[i - 1]!) < 0) return false;
  return true;
}

interface HeapEntry {
  team: string;
  version: number;
  job: PendingJob;
  share: number;
  /** `shortest-first`'s aged work (0 with `fifo`). */
  key: number;
}

/** Criteria 1–4 for two teams' head jobs (team name last, in case of equal ids across teams). */
function before(x: HeapEntry, y: HeapEntry): boolean {
  const c =
    y.job.priority - x.job.priority ||
    x.share - y.share ||
    cmpNum(x.key, y.key) ||
    x.job.submittedAt - y.job.submittedAt ||
    cmpStr(x.job.id, y.job.id) ||
    cmpStr(x.team, y.team);
  return c < 0;
}

export class JobQueue {
  private readonly perTeam = new Map<string, { jobs: PendingJob[]; next: number; version: number }>();
  private readonly heap: HeapEntry[] = [];
  private readonly keys = new Map<PendingJob, number>();

  constructor(
    pending: readonly PendingJob[],
    private readonly shareOf: (team: string) => number,
    ordering: QueueOrdering = { kind: 'fifo' },
  ) {
    if (ordering.kind === 'shortest-first') for (const j of pending) this.keys.set(j, agedWork(j, ordering.now, ordering.defaultRuntimeSeconds));
    const within = ordering.kind === 'fifo' ? compareWithinTeam : (a: PendingJob, b: PendingJob) => b.priority - a.priority || cmpNum(this.key(a), this.key(b)) || compareWithinTeam(a, b);
    for (const j of pending) {
      let q = this.perTeam.get(j.team);
      if (q === undefined) {
        q = { jobs: [], next: 0, version: 0 };
        this.perTeam.set(j.team, q);
      }
      q.jobs.push(j);
    }
    for (const [team, q] of [...this.perTeam].sort((a, b) => cmpStr(a[0], b[0]))) {
      if (!oneRun(q.jobs, within)) q.jobs.sort(within);
      this.pushHead(team, q);
    }
  }

  /** The next job in order, or undefined when every job has been handed out. */
  next(): PendingJob | undefined {
    while (this.heap.length > 0) {
      const top = this.pop();
      const q = this.perTeam.get(top.team)!;
      if (top.version !== q.version) continue;
      q.next++;
      q.version++;
      this.pushHead(top.team, q);
      return top.job;
    }
    return undefined;
  }

  /** Call when `team`'s share changed (admission or preemption). */
  touch(team: string): void {
    const q = this.perTeam.get(team);
    if (q === undefined) return;
    q.version++;
    this.pushHead(team, q);
  }

  private pushHead(team: string, q: { jobs: PendingJob[]; next: number; version: number }): void {
    const job = q.jobs[q.next];
    if (job === undefined) return;
    this.push({ team, version: q.version, job, share: this.shareOf(team), key: this.key(job) });
  }

  private key(job: PendingJob): number {
    return this.keys.get(job) ?? 0;
  }

  private push(e: HeapEntry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): HeapEntry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
