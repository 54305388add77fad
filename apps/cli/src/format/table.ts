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

/**
 * A column whose width is set before any row is seen, so that a table can be printed one row at a time (a stream of
 * pages). A longer cell is cut with `…` when `cut` is set, and otherwise overflows, pushing the next cells right.
 */
export interface FixedColumn<Row> {
  header: string;
  cell: (row: Row) => string;
  width: number;
  cut?: boolean;
}

/**
 * One line of a table of fixed columns: the cells (a row's, or the headers), made printable, each padded to its
 * column's width, two spaces apart, with no trailing spaces.
 */
export function fixedTableLine<Row>(columns: readonly FixedColumn<Row>[], cells: readonly string[]): string {
  return cells
    .map((cell, index) => {
      const column = columns[index];
      const text = printable(cell);
      if (column === undefined || index === cells.length - 1) {
        return text;
      }
      return padEnd(column.cut ? truncate(text, column.width) : text, column.width);
    })
    .join(GAP)
    .trimEnd();
}
