import type { Metrics } from './metrics.js';
import { barChart, escapeHtml, lineChart, type Series } from './svg-chart.js';
import type { SimResult } from './types.js';

export interface ReportRun {
  policy: string;
  result: SimResult;
  metrics: Metrics;
}

const BUCKETS = 200;
const DAY = 86_400;

/** Mean allocated fraction per time bucket, from the allocation step function. */
export function utilizationSeries(result: SimResult, buckets = BUCKETS): [number, number][] {
  const end = result.endSeconds;
  if (end <= 0 || result.capacity <= 0) return [];
  const width = end / buckets;
  const sums = new Float64Array(buckets);
  const steps = result.allocation;
  for (let i = 0; i < steps.length; i++) {
    const from = steps[i]!.seconds;
    const to = i + 1 < steps.length ? steps[i + 1]!.seconds : end;
    const level = steps[i]!.allocated;
    if (level === 0 || to <= from) continue;
    let t = from;
    while (t < to) {
      const b = Math.min(buckets - 1, Math.floor(t / width));
      const bucketEnd = (b + 1) * width;
      const upto = Math.min(to, bucketEnd);
      sums[b]! += (upto - t) * level;
      if (upto <= t) break;
      t = upto;
    }
  }
  return Array.from(sums, (s, b) => [((b + 0.5) * width) / DAY, (100 * s) / (width * result.capacity)] as [number, number]);
}

/**
 * The tail of a delay distribution: [x, % of jobs that waited longer than x], from the median up to
 * the longest wait, every job of the last 1 % included (a log y axis then shows p99 and p99.9 apart).
 */
export function tail(values: number[], points = 200): [number, number][] {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return [];
  const out: [number, number][] = [];
  const from = Math.floor(n / 2);
  const dense = Math.max(from, n - Math.ceil(n / 100));
  const step = Math.max(1, Math.floor((dense - from) / points));
  for (let i = from; i < n; i += i < dense ? step : 1) out.push([Math.max(1, sorted[i]!), (100 * (n - i - 1)) / n || 100 / n / 10]);
  return out;
}

function cdf(values: number[], points = 200): [number, number][] {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return [];
  const out: [number, number][] = [];
  const step = Math.max(1, Math.floor(n / points));
  for (let i = 0; i < n; i += step) out.push([Math.max(1, sorted[i]!), (100 * (i + 1)) / n]);
  out.push([Math.max(1, sorted[n - 1]!), 100]);
  return out;
}

function section(run: ReportRun): string {
  const { result, metrics } = run;
  const delaysByTeam = new Map<string, number[]>();
  for (const j of result.jobs) {
    if (j.firstStartSeconds === null) continue;
    const list = delaysByTeam.get(j.team) ?? [];
    list.push(j.firstStartSeconds - j.submitSeconds);
    delaysByTeam.set(j.team, list);
  }
  const teams = [...delaysByTeam.keys()].sort();
  const cdfSeries: Series[] = teams.map((team) => ({ name: team, points: cdf(delaysByTeam.get(team)!) }));
  const allDelays = teams.flatMap((t) => delaysByTeam.get(t)!);
  const tailSeries: Series[] = [{ name: 'all teams', points: tail(allDelays) }, ...teams.map((team) => ({ name: team, points: tail(delaysByTeam.get(team)!) }))];
  const sizes = Object.keys(metrics.byGangSize);
  const jct: Series = { name: 'mean JCT (h)', points: sizes.map((s, k) => [k, metrics.byGangSize[s]!.meanJctSeconds / 3600]) };
  const wait: Series = { name: 'mean wait (h)', points: sizes.map((s, k) => [k, metrics.byGangSize[s]!.meanQueueingDelaySeconds / 3600]) };
  const bucket = Math.max(result.endSeconds / 100, 1);
  const counts = new Array<number>(100).fill(0);
  for (const t of result.preemptionTimes) counts[Math.min(99, Math.floor(t / bucket))]! += 1;
  const pre: Series = { name: 'preemptions', points: counts.map((c, k) => [((k + 0.5) * bucket) / DAY, c]) };
  const o = metrics.overall;
  const smallest = allDelays.length > 0 ? Math.min(1, 100 / allDelays.length / 10) : 1;
  return `<section><h2>Policy ${escapeHtml(run.policy)}</h2>
<p>${o.completed} of ${o.jobs} jobs completed; utilization ${(100 * o.utilization).toFixed(1)} % (${(100 * o.usefulUtilization).toFixed(1)} % without work preemption discarded);
${o.preemptions} preemptions and ${o.moves} moves to faster flavors losing ${o.lostAcceleratorHours.toFixed(1)} accelerator-hours;
mean queueing delay ${(o.queueingDelaySeconds.mean / 3600).toFixed(2)} h; mean JCT ${(o.jctSeconds.mean / 3600).toFixed(2)} h;
gangs ≥ ${o.largeGang.minAccelerators}: longest wait ${(o.largeGang.longestWaitSeconds / 3600).toFixed(2)} h; Jain ${o.jainFairness.toFixed(3)}.</p>
${teamTable(metrics)}
${lineChart(cdfSeries, { title: 'Queueing delay CDF per team', xLabel: 'queueing delay (s, log scale)', yLabel: '% of jobs', logX: true, yMax: 100, step: true })}
${lineChart(tailSeries, { title: 'Queueing delay tail: jobs that waited longer than x', xLabel: 'queueing delay (s, log scale)', yLabel: '% of jobs (log scale)', logX: true, logY: { yMin: smallest } })}
${barChart(sizes, [jct], { title: 'Mean JCT by gang size (accelerators)', xLabel: 'gang size', yLabel: 'hours' })}
${barChart(sizes, [wait], { title: 'Mean queueing delay by gang size (accelerators)', xLabel: 'gang size', yLabel: 'hours' })}
${lineChart([pre], { title: 'Preemptions over time', xLabel: 'days since trace start', yLabel: 'preemptions per bucket' })}
</section>`;
}

function htmlTable(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function teamTable(m: Metrics): string {
  const head = ['team', 'jobs', 'done', 'wait mean h', 'wait p99 h', 'JCT mean h', 'accelerator-h', 'lost accelerator-h', 'preempt', 'usage ÷ quota share'];
  const rows = Object.entries(m.teams).map(([team, t]) => [
    team,
    String(t.jobs),
    String(t.completed),
    (t.queueingDelaySeconds.mean / 3600).toFixed(2),
    (t.queueingDelaySeconds.p99 / 3600).toFixed(2),
    (t.jctSeconds.mean / 3600).toFixed(2),
    t.acceleratorHours.toFixed(0),
    t.lostAcceleratorHours.toFixed(1),
    String(t.preemptions),
    t.usageOverQuotaShare === null ? '-' : t.usageOverQuotaShare.toFixed(2),
  ]);
  return htmlTable(head, rows);
}

function table(runs: ReportRun[]): string {
  const head = ['policy', 'jobs done', 'util %', 'useful util %', 'wait mean h', 'wait p50 s', 'wait p99 h', 'JCT mean h', 'preempt', 'moves', 'lost accelerator-h', '≥32 longest wait h', 'Jain'];
  const rows = runs.map((r) => {
    const o = r.metrics.overall;
    return [
      r.policy,
      `${o.completed}/${o.jobs}`,
      (100 * o.utilization).toFixed(1),
      (100 * o.usefulUtilization).toFixed(1),
      (o.queueingDelaySeconds.mean / 3600).toFixed(2),
      o.queueingDelaySeconds.median.toFixed(0),
      (o.queueingDelaySeconds.p99 / 3600).toFixed(2),
      (o.jctSeconds.mean / 3600).toFixed(2),
      String(o.preemptions),
      String(o.moves),
      o.lostAcceleratorHours.toFixed(1),
      (o.largeGang.longestWaitSeconds / 3600).toFixed(2),
      o.jainFairness.toFixed(3),
    ];
  });
  return htmlTable(head, rows);
}

export interface ReportAssumptions {
  /** What the figures rest on (quotas, checkpoints, cycles, starting state). */
  assumptions: string[];
  /** Assumptions that change the figures a lot: shown first, in a box. */
  warnings: string[];
}

/**
 * A self-contained HTML page: warnings and assumptions, the comparison table, utilization over time
 * (all policies), then per policy its team table and charts.
 */
export function renderHtmlReport(title: string, runs: ReportRun[], notes: string[] = [], about: ReportAssumptions = { assumptions: [], warnings: [] }): string {
  const util: Series[] = runs.map((r) => ({ name: r.policy, points: utilizationSeries(r.result) }));
  const rejected = runs[0]?.metrics.rejected ?? [];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:960px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}figure{margin:1em 0}figcaption{font-weight:600}.warning{border:2px solid #d62728;background:#fdecea;padding:.6em}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${about.warnings.map((w) => `<p class="warning"><strong>Warning:</strong> ${escapeHtml(w)}</p>`).join('\n')}
${notes.map((n) => `<p>${escapeHtml(n)}</p>`).join('\n')}
${about.assumptions.length > 0 ? `<h2>Assumptions</h2><ul>${about.assumptions.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul>` : ''}
${table(runs)}
${lineChart(util, { title: 'Accelerator utilization over time', xLabel: 'days since trace start', yLabel: '% of accelerators allocated', yMax: 100 })}
${runs.map(section).join('\n')}
<section><h2>Rejected input rows (${rejected.length})</h2><ul>${rejected
    .slice(0, 200)
    .map((r) => `<li>${escapeHtml(`${r.source}:${r.line}: ${r.reason}`)}</li>`)
    .join('')}</ul></section>
</body></html>
`;
}
