import { LIST_LIMIT, OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import type {
  AdminClient,
  AuditEventPage,
  AuditEventType,
  AuditTrailVersion,
  ListAuditEventsQuery,
} from '@apikeys/client';
import { type Command, Option } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkOperation, withClientOf } from '../../api-session.js';
import { parseId, parseRepeatedChoice, parseTimestamp } from '../../arguments.js';
import { AUDIT_EVENT_TYPES, writeAuditEvents } from '../../format/audit-event.js';
import { printable, shellWords } from '../../format/text.js';
import { addCursorOptions, type CursorOptions, cursorQuery, limitOption } from '../../list-options.js';
import { writeStdout } from '../../output.js';

/** The page size of `--all` without `--limit`: the API's largest, for the fewest round trips in a long export. */
export const AUDIT_ALL_PAGE_SIZE = LIST_LIMIT.maximum;

/** The filters of `audit list`, which `keys history` shares. */
export interface AuditFilterOptions {
  targetId?: string;
  actorId?: string;
  type?: AuditEventType[];
  occurredAfter?: string;
  occurredBefore?: string;
}

interface AuditListOptions extends ConnectionOptions, AuditFilterOptions, CursorOptions {
  limit?: number;
  all?: boolean;
  json?: boolean;
}

/** The query of `listAuditEvents` from the flags. */
function toQuery(options: AuditListOptions, limit: number | undefined): ListAuditEventsQuery {
  return {
    ...(options.targetId === undefined ? {} : { target_id: options.targetId }),
    ...(options.actorId === undefined ? {} : { actor_id: options.actorId }),
    ...(options.type === undefined ? {} : { type: options.type }),
    ...(options.occurredAfter === undefined ? {} : { occurred_after: options.occurredAfter }),
    ...(options.occurredBefore === undefined ? {} : { occurred_before: options.occurredBefore }),
    ...(limit === undefined ? {} : { limit }),
    ...cursorQuery(options),
  };
}

/**
 * The filters and limit as `apikeys audit list` flags, for the footer's next-page command; `--api-version` too when it
 * was given as a flag (one from the environment still holds for the next command).
 */
function filterFlags(options: AuditListOptions, versionFlag: boolean): string[] {
  return [
    ...(versionFlag && options.apiVersion !== undefined ? ['--api-version', options.apiVersion] : []),
    ...(options.targetId === undefined ? [] : ['--target-id', options.targetId]),
    ...(options.actorId === undefined ? [] : ['--actor-id', options.actorId]),
    ...(options.type ?? []).flatMap((type) => ['--type', type]),
    ...(options.occurredAfter === undefined ? [] : ['--occurred-after', options.occurredAfter]),
    ...(options.occurredBefore === undefined ? [] : ['--occurred-before', options.occurredBefore]),
    ...(options.limit === undefined ? [] : ['--limit', String(options.limit)]),
  ];
}

/** The footer of a page with more events beyond it: the command that fetches the next page in the same direction. */
function footer(page: AuditEventPage, options: AuditListOptions, versionFlag: boolean): string {
  const cursor = page.direction === 'before' ? page.first_id : page.last_id;
  if (!page.has_more || cursor === null) {
    return '';
  }
  const [label, flag] = page.direction === 'before' ? ['newer events', '--before'] : ['next page', '--after'];
  const words = ['apikeys', 'audit', 'list', ...filterFlags(options, versionFlag), flag, cursor];
  return `\n${printable(`${label}: ${shellWords(words)}`)}\n`;
}

async function listPage(
  client: AdminClient<AuditTrailVersion>,
  options: AuditListOptions,
  versionFlag: boolean,
): Promise<void> {
  const page = await client.auditEvents.list(toQuery(options, options.limit));
  const json = options.json === true;
  await writeAuditEvents(page.data, { json }, writeStdout);
  if (!json) {
    await writeStdout(footer(page, options, versionFlag));
  }
}

/** `apikeys audit`: the organization's audit trail, through the admin API. */
export function registerAudit(program: Command): void {
  const audit = program
    .command('audit')
    .description(
      `the audit trail of the organization (API command; API version ${OPERATION_INTRODUCED_IN.listAuditEvents} on)`,
    );

  const command = audit
    .command('list')
    .summary('list audit events, newest first: one page, or every page with --all')
    .description(
      'list the audit trail of the organization of the admin key, newest first (listAuditEvents): every change to ' +
        'its API keys, its admin keys and itself, through the API or by an operator. A table (OCCURRED, TYPE, ACTOR, ' +
        'TARGET, CHANGES) or, with --json, JSON Lines: one event per line, as the API returns it. With --all, every ' +
        'page is fetched and each event printed as it arrives.',
    )
    .option('--target-id <id>', 'only events about this API key, admin key or organization', parseId)
    .option('--actor-id <admin_key_id>', 'only changes made by this admin key', parseId)
    .addOption(
      new Option('--type <type>', 'only events of this type; repeat for any of several')
        .choices(AUDIT_EVENT_TYPES)
        .argParser(parseRepeatedChoice(AUDIT_EVENT_TYPES)),
    )
    .option(
      '--occurred-after <time>',
      'only events strictly after this RFC 3339 time (2026-11-01T00:00:00Z)',
      parseTimestamp,
    )
    .option('--occurred-before <time>', 'only events strictly before this RFC 3339 time', parseTimestamp)
    .addOption(limitOption('events', AUDIT_ALL_PAGE_SIZE))
    .option('--all', 'fetch every page, printing each event as it arrives')
    .option('--json', "print JSON Lines: one event per line, the API's event object as it is");
  addCursorOptions(command, {
    noun: 'event',
    idName: 'audit_event_id',
    parse: parseId,
    beforeDetail: '; with --all, walk towards the newest, oldest first',
  });
  addConnectionOptions(command).action((options: AuditListOptions, self: Command) => {
    const version = checkOperation(options, 'audit list', 'listAuditEvents');
    const versionFlag = self.getOptionValueSource('apiVersion') === 'cli';
    return withClientOf(options, version, (client) =>
      options.all
        ? writeAuditEvents(
            client.auditEvents.listAll(toQuery(options, options.limit ?? AUDIT_ALL_PAGE_SIZE)),
            { json: options.json === true },
            writeStdout,
          )
        : listPage(client, options, versionFlag),
    );
  });
}
