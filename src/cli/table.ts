/** Formats rows as an aligned plain-text table; columns in `right` are right-aligned. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: ReadonlySet<number> = new Set(),
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => {
      if (i === cells.length - 1 && !right.has(i)) return c;
      return right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!);
    }).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}
