import type { AuditEvent } from '@apikeys/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorNotice } from '../components/error-notice.js';
import { ScrollingTable } from '../components/scrolling-table.js';
import { TimeText } from '../components/time-text.js';
import { formatActor, formatChanges } from '../format.js';
import { queryKeys } from '../query-keys.js';
import { useSession } from '../session.js';

const EVENTS_PER_PAGE = 20;
const HISTORY_COLUMNS = ['When', 'Event', 'By', 'Changes', 'Request ID'];

function EventRow({ event }: { event: AuditEvent }) {
  const changes = formatChanges(event.changes);
  return (
    <tr>
      <td>
        <TimeText value={event.occurred_at} />
      </td>
      <td className="mono">{event.type}</td>
      <td className="mono">{formatActor(event.actor)}</td>
      <td>
        {changes.length === 0 ? (
          '—'
        ) : (
          <ul className="plain-list">
            {changes.map((change) => (
              <li key={change}>{change}</li>
            ))}
          </ul>
        )}
      </td>
      <td className="mono">{event.request_id ?? '—'}</td>
    </tr>
  );
}

/** The audit events of one key, newest first (`listAuditEvents` with `target_id`), page by page. */
export function AuditHistory({ keyId }: { keyId: string }) {
  const { client } = useSession();
  const headingId = useId();
  // The cursors of the pages walked so far: Older pushes the page's last_id, Newer pops it.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1);
  const result = useQuery({
    queryKey: queryKeys.auditEventsPage(keyId, after ?? null),
    queryFn: ({ signal }) =>
      client.auditEvents.list(
        { target_id: keyId, limit: EVENTS_PER_PAGE, ...(after === undefined ? {} : { after_id: after }) },
        { signal },
      ),
    placeholderData: keepPreviousData,
  });
  const page = result.data;

  return (
    <section aria-labelledby={headingId} className="history">
      <h2 id={headingId}>History</h2>
      {result.isPending ? <p role="status">Loading the history…</p> : null}
      {result.isError ? <ErrorNotice error={result.error} title="The history could not be loaded" /> : null}
      {page && page.data.length === 0 ? <p role="status">No event recorded for this key.</p> : null}
      {page && page.data.length > 0 ? (
        <ScrollingTable labelledBy={headingId} busy={result.isFetching} columns={HISTORY_COLUMNS}>
          {page.data.map((event) => (
            <EventRow key={event.id} event={event} />
          ))}
        </ScrollingTable>
      ) : null}
      {cursors.length > 0 || page?.has_more ? (
        <nav className="pager" aria-label="Pages of the history">
          {cursors.length > 0 ? (
            <button type="button" className="button button-secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
              Newer events
            </button>
          ) : null}
          {page?.has_more && page.last_id !== null ? (
            <button
              type="button"
              className="button button-secondary"
              onClick={() => page.last_id !== null && setCursors([...cursors, page.last_id])}
            >
              Older events
            </button>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
