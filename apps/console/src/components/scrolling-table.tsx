import { type ReactNode, useId } from 'react';

/** What names the table: a heading already on the page (its ID), or a caption of its own, for screen readers only. */
type TableName = { labelledBy: string; caption?: never } | { caption: string; labelledBy?: never };

type ScrollingTableProps = TableName & {
  busy: boolean;
  /** The header row's cells. */
  columns: readonly string[];
  /** The body's rows. */
  children: ReactNode;
};

/** A table in a region that scrolls sideways on a narrow screen; focusable, so that the keyboard can scroll it too. */
export function ScrollingTable({ labelledBy, caption, busy, columns, children }: ScrollingTableProps) {
  const captionId = useId();
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the keyboard must reach a scrolling region (WCAG 2.1.1)
    <section className="table-scroll" aria-labelledby={labelledBy ?? captionId} tabIndex={0}>
      <table aria-busy={busy}>
        {caption === undefined ? null : (
          <caption id={captionId} className="visually-hidden">
            {caption}
          </caption>
        )}
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </section>
  );
}
