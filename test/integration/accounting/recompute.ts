/**
 * An independent recomputation of usage from a job's history as the API shows it (its transitions and its
 * `job.admitted` events) and the flavors' price history — plain TypeScript over millisecond integers, no
 * SQL — to compare the usage ledger with.
 */
export interface JobHistory {
  id: string;
  team: string;
  transitions: { from: string | null; to: string; at: Date }[];
  events: { kind: string; at: Date; data: unknown }[];
}

export interface Price {
  flavor: string;
  costPerHour: number;
  effectiveFrom: Date;
}

export interface Holding {
  jobId: string;
  team: string;
  flavor: string;
  accelerators: number;
  start: number;
  end: number | null;
  endState: string | null;
  wasted: boolean;
  /** Where the wasted work begins: the checkpoint a preemption or move kept (its event's lostSince), else the start. */
  wastedFrom: number;
}

const HELD = new Set(['ADMITTED', 'BINDING', 'RUNNING']);

export function holdings(job: JobHistory): Holding[] {
  const out: Holding[] = [];
  let open: Holding | undefined;
  for (const t of job.transitions) {
    if (t.to === 'ADMITTED') {
      const admitted = job.events.find((e) => e.kind === 'job.admitted' && e.at.getTime() === t.at.getTime());
      const data = (admitted?.data ?? {}) as { flavor?: string; accelerators?: number };
      if (data.flavor === undefined || data.accelerators === undefined) throw new Error(`job ${job.id}: no job.admitted event at ${t.at.toISOString()}`);
      open = { jobId: job.id, team: job.team, flavor: data.flavor, accelerators: data.accelerators, start: t.at.getTime(), end: null, endState: null, wasted: false, wastedFrom: t.at.getTime() };
      out.push(open);
    } else if (open !== undefined && t.from !== null && HELD.has(t.from) && !HELD.has(t.to)) {
      open.end = t.at.getTime();
      open.endState = t.to;
      open.wasted = ['FAILED', 'PREEMPTED', 'PENDING'].includes(t.to);
      const release = job.events.find((e) => (e.kind === 'job.preempted' || e.kind === 'job.moved') && e.at.getTime() === t.at.getTime());
      const lostSince = (release?.data as { lostSince?: string } | undefined)?.lostSince;
      if (lostSince !== undefined) open.wastedFrom = Math.min(Math.max(new Date(lostSince).getTime(), open.start), open.end);
      open = undefined;
    }
  }
  return out;
}

export type Dim = 'team' | 'flavor' | 'day' | 'month';

export interface Figures {
  seconds: number;
  wasted: number;
  cost: number;
  completed: number;
}

const bucketStart = (t: number, unit: 'day' | 'month'): number => {
  const d = new Date(t);
  return unit === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
const nextBucket = (start: number, unit: 'day' | 'month'): number => {
  const d = new Date(start);
  return unit === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

/** Figures per group key `team|flavor|bucketStartMs` (absent dimensions are empty). */
export function recompute(hs: Holding[], prices: Price[], w: { from: Date; to: Date; now: Date; groupBy: Dim[] }): Map<string, Figures> {
  const unit = w.groupBy.includes('day') ? 'day' : w.groupBy.includes('month') ? 'month' : null;
  const key = (h: Holding, bucket: number | null): string =>
    [w.groupBy.includes('team') ? h.team : '', w.groupBy.includes('flavor') ? h.flavor : '', unit === null || bucket === null ? '' : String(bucket)].join('|');
  const out = new Map<string, Figures>();
  const add = (k: string): Figures => {
    let f = out.get(k);
    if (!f) out.set(k, (f = { seconds: 0, wasted: 0, cost: 0, completed: 0 }));
    return f;
  };
  const from = w.from.getTime();
  const to = w.to.getTime();
  for (const h of hs) {
    const a = Math.max(h.start, from);
    const b = Math.min(h.end ?? w.now.getTime(), to);
    const cuts = new Set<number>([a, b]);
    if (unit !== null) for (let t = nextBucket(bucketStart(a, unit), unit); t < b; t = nextBucket(t, unit)) cuts.add(t);
    const own = prices.filter((p) => p.flavor === h.flavor).sort((x, y) => x.effectiveFrom.getTime() - y.effectiveFrom.getTime());
    for (const p of own) if (p.effectiveFrom.getTime() > a && p.effectiveFrom.getTime() < b) cuts.add(p.effectiveFrom.getTime());
    const points = [...cuts].filter((t) => t >= a && t <= b).sort((x, y) => x - y);
    for (let i = 0; i + 1 < points.length; i++) {
      const x = points[i]!;
      const y = points[i + 1]!;
      if (y <= x) continue;
      const price = [...own].reverse().find((p) => p.effectiveFrom.getTime() <= x)?.costPerHour ?? own[0]?.costPerHour ?? 0;
      const f = add(key(h, unit === null ? null : bucketStart(x, unit)));
      const secs = (h.accelerators * (y - x)) / 1000;
      f.seconds += secs;
      if (h.wasted && y > h.wastedFrom) f.wasted += (h.accelerators * (y - Math.max(x, h.wastedFrom))) / 1000;
      f.cost += (secs / 3600) * price;
    }
    if (h.endState === 'SUCCEEDED' && h.end !== null && h.end >= from && h.end < to) add(key(h, unit === null ? null : bucketStart(h.end, unit))).completed += 1;
  }
  return out;
}
