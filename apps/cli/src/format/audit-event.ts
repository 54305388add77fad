import type { AuditActor, AuditChanges, AuditEvent, AuditEventType } from '@apikeys/client';
import { type FixedColumn, fixedTableLine } from './table.js';

/**
 * Every audit event type of the spec. A `Record` over the generated union: a type added to the spec is a compile error
 * here until the CLI knows it.
 */
const TYPES: Record<AuditEventType, true> = {
  'api_key.created': true,
  'api_key.updated': true,
  'api_key.rotated': true,
  'api_key.seeded': true,
  'admin_key.created': true,
  'admin_key.disabled': true,
  'admin_key.enabled': true,
  'organization.created': true,
};

/** The audit event types, in the order of the spec: the choices of `--type`. */
export const AUDIT_EVENT_TYPES = Object.keys(TYPES) as AuditEventType[];

/** What `audit list` and `keys history` print when no event matches. */
export const NO_EVENTS = 'No audit events found.';

/** An actor in a table cell: the admin key's ID, or `operator:<OS user>` (`operator` when the user is unknown). */
export function actorText(actor: AuditActor): string {
  if (actor.type === 'admin_key') {
    return actor.id;
  }
  return actor.name === null ? 'operator' : `operator:${actor.name}`;
}

/** A value of a change: names quoted as JSON strings, statuses and times as they are, `null` for none. */
function valueText(value: string | null, quoted: boolean): string {
  if (value === null) {
    return 'null';
  }
  return quoted ? JSON.stringify(value) : value;
}

/**
 * What an event changed, compactly: `name: "a" → "b"; status: active → inactive`, permissions and metadata as
 * compact JSON (`permissions: [] → ["documents.read"]`), then the other key of a rotation
 * (`related: apikey_...`) and the count of seeded keys (`key_count: 2000`).
 */
export function changesText(event: Pick<AuditEvent, 'changes' | 'related' | 'key_count'>): string {
  const changes: AuditChanges = event.changes;
  const parts: string[] = [];
  if (changes.name) {
    parts.push(`name: ${valueText(changes.name.from, true)} → ${valueText(changes.name.to, true)}`);
  }
  if (changes.status) {
    parts.push(`status: ${valueText(changes.status.from, false)} → ${valueText(changes.status.to, false)}`);
  }
  if (changes.expires_at) {
    parts.push(`expires_at: ${valueText(changes.expires_at.from, false)} → ${valueText(changes.expires_at.to, false)}`);
  }
  if (changes.permissions) {
    parts.push(`permissions: ${JSON.stringify(changes.permissions.from)} → ${JSON.stringify(changes.permissions.to)}`);
  }
  if (changes.metadata) {
    parts.push(`metadata: ${JSON.stringify(changes.metadata.from)} → ${JSON.stringify(changes.metadata.to)}`);
  }
  if (event.related !== null) {
    parts.push(`related: ${event.related.id}`);
  }
  if (event.key_count !== null) {
    parts.push(`key_count: ${event.key_count}`);
  }
  return parts.join('; ');
}

/** The width of an ID of the API (`adminkey_` and 24 characters): the widest actor or target in practice. */
const ID_WIDTH = 'adminkey_'.length + 24;

/**
 * The columns of an audit event table. Their widths are fixed, not measured over the rows, so that a table of every
 * page prints each row as it arrives: a longer ID pushes its row's later cells right rather than being cut, and an
 * operator's name is cut to the width.
 */
const COLUMNS: readonly FixedColumn<AuditEvent>[] = [
  { header: 'OCCURRED', cell: (event) => event.occurred_at, width: '2026-11-24T10:15:30.123456Z'.length },
  {
    header: 'TYPE',
    cell: (event) => event.type,
    width: Math.max(...AUDIT_EVENT_TYPES.map((type) => type.length)),
  },
  { header: 'ACTOR', cell: (event) => actorText(event.actor), width: ID_WIDTH, cut: true },
  { header: 'TARGET', cell: (event) => event.target.id, width: ID_WIDTH },
  { header: 'CHANGES', cell: changesText, width: 0 },
];

/** The header line of an audit event table. */
export function auditEventHeader(): string {
  return fixedTableLine(
    COLUMNS,
    COLUMNS.map((column) => column.header),
  );
}

/** One audit event as a line of the table under `auditEventHeader()`. */
export function auditEventRow(event: AuditEvent): string {
  return fixedTableLine(
    COLUMNS,
    COLUMNS.map((column) => column.cell(event)),
  );
}

/**
 * Writes audit events as they come: one JSON object per line (JSON Lines, each the API's event as it is), or a table
 * whose header comes with the first event (`NO_EVENTS` when there is none). Holds one event at a time, so an export of
 * any length runs in constant memory; `write` waits while the output is full.
 */
export async function writeAuditEvents(
  events: AsyncIterable<AuditEvent> | Iterable<AuditEvent>,
  options: { json: boolean },
  write: (text: string) => Promise<void>,
): Promise<void> {
  let count = 0;
  for await (const event of events) {
    if (options.json) {
      await write(`${JSON.stringify(event)}\n`);
    } else {
      await write(`${count === 0 ? `${auditEventHeader()}\n` : ''}${auditEventRow(event)}\n`);
    }
    count += 1;
  }
  if (count === 0 && !options.json) {
    await write(`${NO_EVENTS}\n`);
  }
}
