/** Minimal inline-SVG charts for the self-contained HTML report (no external assets, no scripts). */

export interface Series {
  name: string;
  points: [number, number][];
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173'];
/** Dash patterns, so that series stay apart where they overlap, in grey print and for colour-blind readers. */
const DASHES = ['', '7 3', '2 2', '9 3 2 3'];

/** Series i: a colour, and a dash pattern that differs from its neighbours' (15 × 4 distinct pairs). */
export function seriesStyle(i: number): { color: string; dash: string } {
  return { color: PALETTE[i % PALETTE.length]!, dash: DASHES[i % DASHES.length]! };
}
const W = 720;
const H = 300;
const M = { left: 60, right: 170, top: 20, bottom: 40 };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-2) return v.toExponential(1);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  logX?: boolean;
  /** Log-scale y from `yMin` (> 0), e.g. a tail: the share of jobs above x down to one job in n. */
  logY?: { yMin: number };
  yMax?: number;
  /** Draw as steps (CDFs). */
  step?: boolean;
}

export function lineChart(series: Series[], o: LineChartOptions): string {
  const tx = (x: number): number => (o.logX === true ? Math.log10(Math.max(x, 1)) : x);
  if (o.logY !== undefined) return logYChart(series, o, o.logY.yMin, tx);
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return `<figure><figcaption>${escapeHtml(o.title)}</figcaption><p>(no data)</p></figure>`;
  let x0 = Infinity;
  let x1 = -Infinity;
  let y1 = o.yMax ?? -Infinity;
  for (const [x, y] of all) {
    x0 = Math.min(x0, tx(x));
    x1 = Math.max(x1, tx(x));
    if (o.yMax === undefined) y1 = Math.max(y1, y);
  }
  if (x1 === x0) x1 = x0 + 1;
  if (!(y1 > 0)) y1 = 1;
  const px = (x: number): number => M.left + ((tx(x) - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (y: number): number => H - M.bottom - (y / y1) * (H - M.top - M.bottom);
  const parts: string[] = [];
  parts.push(axes(x0, x1, y1, o, (v) => (o.logX === true ? `1e${v.toFixed(0)}` : fmt(v))));
  series.forEach((s, i) => parts.push(seriesPath(s, i, px, py, o.step === true)));
  return figure(o.title, parts.join(''));
}

function seriesPath(s: Series, i: number, px: (x: number) => number, py: (y: number) => number, step: boolean): string {
  const { color, dash } = seriesStyle(i);
  let d = '';
  s.points.forEach(([x, y], k) => {
    if (k === 0) d += `M${px(x).toFixed(1)},${py(y).toFixed(1)}`;
    else if (step) d += `V${py(s.points[k - 1]![1]).toFixed(1)}H${px(x).toFixed(1)}V${py(y).toFixed(1)}`;
    else d += `L${px(x).toFixed(1)},${py(y).toFixed(1)}`;
  });
  const dashAttr = dash === '' ? '' : ` stroke-dasharray="${dash}"`;
  return `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.5"${dashAttr}><title>${escapeHtml(s.name)}</title></path>${legend(i, s.name)}`;
}

/** A line chart with a log-scale y axis (decades from `yMin` up to the largest value), steps between points. */
function logYChart(series: Series[], o: LineChartOptions, yMin: number, tx: (x: number) => number): string {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return `<figure><figcaption>${escapeHtml(o.title)}</figcaption><p>(no data)</p></figure>`;
  let x0 = Infinity;
  let x1 = -Infinity;
  let top = yMin;
  for (const [x, y] of all) {
    x0 = Math.min(x0, tx(x));
    x1 = Math.max(x1, tx(x));
    top = Math.max(top, y);
  }
  if (x1 === x0) x1 = x0 + 1;
  const l0 = Math.floor(Math.log10(yMin));
  const l1 = Math.max(l0 + 1, Math.ceil(Math.log10(top)));
  const bottom = H - M.bottom;
  const right = W - M.right;
  const px = (x: number): number => M.left + ((tx(x) - x0) / (x1 - x0)) * (right - M.left);
  const py = (y: number): number => bottom - ((Math.log10(Math.max(y, yMin)) - l0) / (l1 - l0)) * (bottom - M.top);
  const parts: string[] = [];
  parts.push(`<line x1="${M.left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${bottom}" stroke="#333"/>`);
  for (let l = l0; l <= l1; l++) {
    const y = py(10 ** l);
    parts.push(`<line x1="${M.left}" y1="${y.toFixed(1)}" x2="${right}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${M.left - 4}" y="${(y + 3).toFixed(1)}" font-size="10" text-anchor="end">${fmt(10 ** l)}</text>`);
  }
  for (let k = 0; k <= 4; k++) {
    const v = x0 + (k / 4) * (x1 - x0);
    const x = M.left + (k / 4) * (right - M.left);
    parts.push(`<text x="${x.toFixed(1)}" y="${bottom + 14}" font-size="10" text-anchor="middle">${o.logX === true ? `1e${v.toFixed(0)}` : fmt(v)}</text>`);
  }
  parts.push(`<text x="${(M.left + right) / 2}" y="${H - 6}" font-size="11" text-anchor="middle">${escapeHtml(o.xLabel)}</text>`);
  parts.push(`<text x="12" y="${(M.top + bottom) / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 ${(M.top + bottom) / 2})">${escapeHtml(o.yLabel)}</text>`);
  series.forEach((s, i) => parts.push(seriesPath(s, i, px, py, true)));
  return figure(o.title, parts.join(''));
}

export function barChart(categories: string[], series: Series[], o: { title: string; xLabel: string; yLabel: string }): string {
  // series[i].points[k] = [k, value] for categories[k]
  let y1 = 0;
  for (const s of series) for (const [, y] of s.points) y1 = Math.max(y1, y);
  if (!(y1 > 0)) y1 = 1;
  const plotW = W - M.left - M.right;
  const groupW = plotW / Math.max(1, categories.length);
  const barW = (groupW * 0.8) / Math.max(1, series.length);
  const py = (y: number): number => H - M.bottom - (y / y1) * (H - M.top - M.bottom);
  const parts: string[] = [axes(0, 1, y1, { ...o, yLabel: o.yLabel }, () => '', true)];
  categories.forEach((c, k) => {
    const x = M.left + k * groupW + groupW / 2;
    parts.push(`<text x="${x.toFixed(1)}" y="${H - M.bottom + 14}" font-size="10" text-anchor="middle">${escapeHtml(c)}</text>`);
  });
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    for (const [k, y] of s.points) {
      const x = M.left + k * groupW + groupW * 0.1 + i * barW;
      parts.push(`<rect x="${x.toFixed(1)}" y="${py(y).toFixed(1)}" width="${Math.max(0.5, barW - 0.5).toFixed(1)}" height="${(H - M.bottom - py(y)).toFixed(1)}" fill="${color}"><title>${escapeHtml(`${s.name} ${categories[k] ?? ''}: ${fmt(y)}`)}</title></rect>`);
    }
    parts.push(legend(i, s.name, color));
  });
  return figure(o.title, parts.join(''));
}

function axes(x0: number, x1: number, y1: number, o: { xLabel: string; yLabel: string }, xTick: (v: number) => string, noXTicks = false): string {
  const parts: string[] = [];
  const bottom = H - M.bottom;
  const right = W - M.right;
  parts.push(`<line x1="${M.left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${bottom}" stroke="#333"/>`);
  for (let k = 0; k <= 4; k++) {
    const y = bottom - (k / 4) * (bottom - M.top);
    parts.push(`<line x1="${M.left}" y1="${y.toFixed(1)}" x2="${right}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${M.left - 4}" y="${(y + 3).toFixed(1)}" font-size="10" text-anchor="end">${fmt((k / 4) * y1)}</text>`);
    if (!noXTicks) {
      const x = M.left + (k / 4) * (right - M.left);
      parts.push(`<text x="${x.toFixed(1)}" y="${bottom + 14}" font-size="10" text-anchor="middle">${xTick(x0 + (k / 4) * (x1 - x0))}</text>`);
    }
  }
  parts.push(`<text x="${(M.left + right) / 2}" y="${H - 6}" font-size="11" text-anchor="middle">${escapeHtml(o.xLabel)}</text>`);
  parts.push(`<text x="12" y="${(M.top + bottom) / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 ${(M.top + bottom) / 2})">${escapeHtml(o.yLabel)}</text>`);
  return parts.join('');
}

/** Legend entry i: a line sample in the series' colour and dash (or a swatch of `fill` for bars). */
function legend(i: number, name: string, fill?: string): string {
  const y = M.top + 4 + i * 14;
  const x = W - M.right + 10;
  const { color, dash } = seriesStyle(i);
  const sample =
    fill !== undefined
      ? `<rect x="${x}" y="${y}" width="10" height="10" fill="${fill}"/>`
      : `<line x1="${x}" y1="${y + 5}" x2="${x + 22}" y2="${y + 5}" stroke="${color}" stroke-width="2"${dash === '' ? '' : ` stroke-dasharray="${dash}"`}/>`;
  return `${sample}<text x="${x + (fill !== undefined ? 14 : 26)}" y="${y + 9}" font-size="10">${escapeHtml(name)}</text>`;
}

function figure(title: string, body: string): string {
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${body}</svg></figure>`;
}
