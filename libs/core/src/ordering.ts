/**
 * The order in which one cycle considers pending jobs. Most important first:
 *
 *   1. priority, higher first;
 *   2. the team's weighted dominant share (fair-share.ts), lower first — recomputed after every
 *      admission and preemption, so a team that just got capacity yields to the others;
 *   3. submittedAt, earlier first (a requeued preempted job keeps its original place);
 *   4. id, lexicographically (the deterministic tie-break).
 *
 * Within one team criterion 2 is constant, so each team's jobs are sorted once (1, 3, 4); a heap over
 * the teams' head jobs, keyed by all four criteria, picks the next job. A team whose share changes is
 * re-keyed (stale heap entries are skipped), so a cycle costs O(jobs · log teams).
 */
import type { PendingJob } from './model.js';

const cmpStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Criteria 1, 3, 4. */
export function compareWithinTeam(a: PendingJob, b: PendingJob): number {
  return b.priority - a.priority || a.submittedAt - b.submittedAt || cmpStr(a.id, b.id);
}

interface HeapEntry {
  team: string;
  version: number;
  job: PendingJob;
  share: number;
}

/** Criteria 1–4 for two teams' head jobs (team name last, in case of equal ids across teams). */
function before(x: HeapEntry, y: HeapEntry): boolean {
  const c =
    y.job.priority - x.job.priority ||
    x.share - y.share ||
    x.job.submittedAt - y.job.submittedAt ||
    cmpStr(x.job.id, y.job.id) ||
    cmpStr(x.team, y.team);
  return c < 0;
}

export class JobQueue {
  private readonly perTeam = new Map<string, { jobs: PendingJob[]; next: number; version: number }>();
  private readonly heap: HeapEntry[] = [];

  constructor(
    pending: readonly PendingJob[],
    private readonly shareOf: (team: string) => number,
  ) {
    for (const j of pending) {
      let q = this.perTeam.get(j.team);
      if (q === undefined) {
        q = { jobs: [], next: 0, version: 0 };
        this.perTeam.set(j.team, q);
      }
      q.jobs.push(j);
    }
    for (const [team, q] of [...this.perTeam].sort((a, b) => cmpStr(a[0], b[0]))) {
      q.jobs.sort(compareWithinTeam);
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
    this.push({ team, version: q.version, job, share: this.shareOf(team) });
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
