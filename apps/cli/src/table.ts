export interface TableStyle {
  /** `first-left` (default): the first column left-aligned, the others right-aligned (figures); `left`: every column left-aligned (listings). */
  align?: 'first-left' | 'left';
  /** A dashed rule under the header (default true). */
  rule?: boolean;
  /** The header line (and its rule); false (`--no-headers`): the rows alone, as wide as they need. */
  headers?: boolean;
}

/** Plain-text tables, columns two spaces apart. */
export function formatTable(head: string[], rows: string[][], style: TableStyle = {}): string {
  const headers = style.headers !== false;
  const widths = head.map((h, i) => Math.max(headers ? h.length : 0, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number): boolean => i === 0 || style.align === 'left';
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  if (!headers) return rows.length === 0 ? '' : rows.map(line).join('\n') + '\n';
  const rule = style.rule === false ? [] : [line(widths.map((w) => '-'.repeat(w)))];
  return [line(head), ...rule, ...rows.map(line)].join('\n') + '\n';
}

export const hours = (s: number): string => (s / 3600).toFixed(2);
export const signed = (v: number, digits = 2): string => (v > 0 ? '+' : '') + v.toFixed(digits);
