import { LIST_LIMIT, OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import type { AdminClient, AuditEvent, AuditTrailVersion } from '@apikeys/client';
import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkOperation, withClientOf } from '../../api-session.js';
import { parseApiKeyId, parseInteger } from '../../arguments.js';
import { writeAuditEvents } from '../../format/audit-event.js';
import { writeStdout } from '../../output.js';
import { AUDIT_ALL_PAGE_SIZE } from './audit-list.js';

interface HistoryOptions extends ConnectionOptions {
  limit?: number;
  json?: boolean;
}

/**
 * The events of one target, oldest first, in pages of `limit`. The API lists newest first, and walks towards newer
 * events only from a cursor: a history of one page is that page reversed; a longer one is walked once forwards to find
 * its oldest event, keeping nothing else, then backwards from that event. One page is held at a time.
 */
async function* oldestFirst(
  client: AdminClient<AuditTrailVersion>,
  targetId: string,
  limit: number,
): AsyncGenerator<AuditEvent, void, undefined> {
  const newest = await client.auditEvents.list({ target_id: targetId, limit });
  if (!newest.has_more) {
    yield* [...newest.data].reverse();
    return;
  }
  let oldest: AuditEvent | undefined;
  for await (const event of newest) {
    oldest = event;
  }
  if (oldest === undefined) {
    return;
  }
  yield oldest;
  yield* client.auditEvents.listAll({ target_id: targetId, before_id: oldest.id, limit });
}

/** `apikeys keys history`: the audit events of one API key, oldest first (`listAuditEvents` with `target_id`). */
export function registerKeysHistory(keys: Command): void {
  const command = keys
    .command('history')
    .summary('show the history of an API key: its audit events, oldest first')
    .description(
      'show the history of an API key: every audit event about it (created, updated, rotated), oldest first, so that ' +
        'it reads in the order things happened and ends with the latest change. Fetches every page ' +
        `(listAuditEvents with target_id; API version ${OPERATION_INTRODUCED_IN.listAuditEvents} on). A table, or ` +
        'JSON Lines with --json.',
    )
    .argument('<api_key_id>', 'ID of the API key (apikey_...)', parseApiKeyId)
    .option(
      '--limit <n>',
      `events per request, ${LIST_LIMIT.minimum} to ${LIST_LIMIT.maximum} (default: ${AUDIT_ALL_PAGE_SIZE})`,
      parseInteger(LIST_LIMIT.minimum, LIST_LIMIT.maximum),
    )
    .option('--json', "print JSON Lines: one event per line, the API's event object as it is");
  addConnectionOptions(command).action((id: string, options: HistoryOptions) => {
    const version = checkOperation(options, 'keys history', 'listAuditEvents');
    return withClientOf(options, version, async (client) => {
      // The trail cannot tell an ID of no key from a key without events (one seeded in bulk): ask for the key, so
      // that a mistyped ID is a not_found_error rather than an empty history.
      await client.apiKeys.retrieve(id);
      await writeAuditEvents(
        oldestFirst(client, id, options.limit ?? AUDIT_ALL_PAGE_SIZE),
        { json: options.json === true },
        writeStdout,
      );
    });
  });
}
