import { displayWidth, padEnd, printable, truncate } from './text.js';

/** One column of a table: its header, how to get a row's cell, and the widest the column may grow. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => string;
  /** Longer cells are cut with `…`; no limit when omitted. */
  maxWidth?: number;
}

const GAP = '  ';

/**
 * Renders rows as a plain table, one line per row under a header line: each column as wide as its widest cell (up to
 * its `maxWidth`), two spaces between columns, no trailing spaces. Cells are made printable first.
 */
export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string[] {
  const cells = rows.map((row) =>
    columns.map((column) => {
      const text = printable(column.cell(row));
      return column.maxWidth === undefined ? text : truncate(text, column.maxWidth);
    }),
  );
  // A loop, not Math.max(...cells): spreading a million cells would overflow the call stack.
  const widths = columns.map((column) => displayWidth(column.header));
  for (const line of cells) {
    line.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, displayWidth(cell));
    });
  }
  const render = (line: readonly string[]) =>
    line
      .map((cell, index) => (index === line.length - 1 ? cell : padEnd(cell, widths[index] ?? 0)))
      .join(GAP)
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...cells.map(render)];
}
