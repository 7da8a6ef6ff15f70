/** Plain-text tables: the first column left-aligned, the others right-aligned. */
export function formatTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

export const hours = (s: number): string => (s / 3600).toFixed(2);
export const signed = (v: number, digits = 2): string => (v > 0 ? '+' : '') + v.toFixed(digits);
