export function formatTable(columns: string[], rows: (string | number)[][]): string {
  const cells = [
    columns,
    ...rows.map((r) =>
      r.map((c) => (typeof c === 'number' ? c.toLocaleString('en-US', { maximumFractionDigits: 1 }) : c)),
    ),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: (string | number)[]) =>
    '| ' +
    r
      .map((c, i) => (typeof rows[0]?.[i] === 'number' ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i])))
      .join(' | ') +
    ' |';
  return [line(cells[0]), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...cells.slice(1).map(line)].join(
    '\n',
  );
}
