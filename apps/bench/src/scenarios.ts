import { LATEST_API_VERSION, API_KEY_STATUSES as STATUSES } from '@apikeys/api-types';
import { checksumOf, randomBase62, SECRET_PREFIX, secretForm } from '@apikeys/store';
import { EVENTS_PER_TARGET, KNOWN_KEYS, type SampledEvent, type Samples, SEEDED_ACTORS } from './seed.js';

const LIST = '/v1/organizations/api_keys';
const AUDIT = '/v1/organizations/audit_events';
const VERIFY = '/v1/keys/verify';
// The seed spreads keys over three workspaces plus the default one (null, not filterable) and five users.
const WORKSPACES = ['wrkspc_seed0', 'wrkspc_seed1', 'wrkspc_seed2'];
const USERS = ['user_seed0', 'user_seed1', 'user_seed2', 'user_seed3', 'user_seed4'];

/** What the references serve: the first page of 20 or 1000 keys, and the verification of a secret. */
export type ReferenceScenarioName = 'list-20' | 'list-1000' | 'verify' | 'verify-miss';

/** One kind of request the suite measures; its requests cycle through `paths`. */
export interface Scenario {
  name: string;
  description: string;
  method: 'GET' | 'POST';
  /** The references' scenario this one is compared with. */
  reference: ReferenceScenarioName;
  /** The request paths to cycle through, built from keys and events sampled over the whole database. */
  paths(samples: Samples): string[];
  /** Request body; `%n` becomes a running number so every update changes the key. */
  bodyTemplate?: string;
  /** Request bodies to cycle through instead. */
  bodies?(samples: Samples): string[];
  /** Needs the database's keys with known secrets (`Samples.secrets`), created after seeding. */
  knownKeys?: true;
  /** Headers on top of the target's (another API version, say). */
  headers?: Record<string, string>;
  /** The warm-up lasts until every body has been sent once (a cache-hit scenario must measure hits only). */
  warmUpEveryBody?: true;
}

const at = <T>(values: readonly T[], i: number): T => values[i % values.length] as T;

/** A list query per sampled ID: `extra(i)` adds the filters of the i-th request, `cursor` the ID as a cursor. */
function listPaths(cursor: 'after_id' | 'before_id', extra: (i: number) => string = () => '') {
  return ({ keyIds }: Samples) => keyIds.map((id, i) => `${LIST}?limit=20${extra(i)}&${cursor}=${id}`);
}

/** An audit trail query per sampled event that `keep` keeps: `query(event)` gives its parameters after `limit=20`. */
function auditPaths(query: (event: SampledEvent) => string, keep: (event: SampledEvent) => boolean = () => true) {
  return ({ events }: Samples) => events.filter(keep).map((event) => `${AUDIT}?limit=20${query(event)}`);
}

/** The width of the time window of `audit-range`: a second of the trail, about a thousand seeded events. */
const RANGE_WINDOW_MICROS = 1_000_000;
const rfc3339 = (micros: number) => new Date(Math.floor(micros / 1000)).toISOString();

const byStatus = (i: number) => `&status=${at(STATUSES, i)}`;
const byWorkspace = (i: number) => `&workspace_id=${at(WORKSPACES, i)}`;
const byCreator = (i: number) => `&created_by_user_id=${at(USERS, i)}`;
const combined = (i: number) => `${byStatus(i)}${byWorkspace(i)}${byCreator(i)}`;

const list = (name: string, description: string, paths: Scenario['paths']): Scenario => ({
  name,
  description,
  method: 'GET',
  reference: 'list-20',
  paths,
});

/** A scenario of the audit trail, which only the latest API version has. */
const audit = (name: string, description: string, paths: Scenario['paths']): Scenario => ({
  ...list(name, `audit trail: ${description}`, paths),
  headers: { 'vendor-version': LATEST_API_VERSION },
});

/** The audit scenarios: each page's time at the larger store is compared with the smaller's. */
export const AUDIT_SCENARIOS: readonly Scenario[] = [
  audit('audit-20', 'first page, limit=20', () => [`${AUDIT}?limit=20`]),
  audit(
    'audit-after',
    'limit=20, after_id = a sampled event (deep pages over the whole trail)',
    auditPaths((event) => `&after_id=${event.id}`),
  ),
  audit(
    'audit-target',
    `target_id = the target of a sampled event (about ${EVENTS_PER_TARGET} events each)`,
    auditPaths((event) => `&target_id=${event.targetId}`),
  ),
  audit(
    'audit-actor-after',
    `actor_id (one of the ${SEEDED_ACTORS} seeded admin keys) + after_id`,
    auditPaths(
      (event) => `&actor_id=${event.actorId}&after_id=${event.id}`,
      (event) => event.actorId !== null,
    ),
  ),
  audit(
    'audit-type-after',
    'type=admin_key.disabled (1 % of events) + after_id',
    auditPaths((event) => `&type=admin_key.disabled&after_id=${event.id}`),
  ),
  audit(
    'audit-types-after',
    'type=api_key.created&type=api_key.rotated (18 % of events) + after_id',
    auditPaths((event) => `&type=api_key.created&type=api_key.rotated&after_id=${event.id}`),
  ),
  audit(
    'audit-range',
    'occurred_after and occurred_before one second apart, ending at a sampled event',
    auditPaths((event) => {
      const after = rfc3339(event.occurredAt - RANGE_WINDOW_MICROS);
      return `&occurred_after=${after}&occurred_before=${rfc3339(event.occurredAt)}`;
    }),
  ),
];

/**
 * The permission the permission filter scenarios list by: the seed grants it to two keys in five, through
 * `documents.read` itself, `documents.*` or `*` (`seedApiKeys({ lifecycle: true })`).
 */
export const LISTED_PERMISSION = 'documents.read';

/** The permission filter of the key list (latest API version), read from the permissions index. */
export const PERMISSION_SCENARIOS: readonly Scenario[] = [
  list('permission-20', `latest version: permission=${LISTED_PERMISSION}, first page`, () => [
    `${LIST}?limit=20&permission=${LISTED_PERMISSION}`,
  ]),
  list(
    'permission-after',
    `latest version: permission=${LISTED_PERMISSION} + after_id`,
    listPaths('after_id', () => `&permission=${LISTED_PERMISSION}`),
  ),
].map((scenario) => ({ ...scenario, headers: { 'vendor-version': LATEST_API_VERSION } }));

const verifyBody = (secret: string) => JSON.stringify({ key: secret });

/**
 * How many distinct unknown secrets `verify-miss` cycles through: more than a run sends, so that the server's cache
 * of secrets found to be no key's (5 s by default) never answers.
 */
export const UNKNOWN_SECRETS = 200_000;
// The random part of a secret, between its prefix and its checksum (the store's secrets.ts).
const SECRET_RANDOM_LENGTH = 43;

/** A secret of no key, in the current form with a valid checksum, so that the server looks it up. */
function unknownSecret(): string {
  const body = SECRET_PREFIX.apiKey + randomBase62(SECRET_RANDOM_LENGTH);
  return body + checksumOf(body);
}

let unknownSecretBodies: string[] | undefined;

/** The bodies of `verify-miss`, made once per run: every target verifies the same secrets. */
function verifyMissBodies(): string[] {
  if (!unknownSecretBodies) {
    const secrets = Array.from({ length: UNKNOWN_SECRETS }, unknownSecret);
    if (secretForm(secrets[0] ?? '') !== 'checksummed') {
      throw new Error(`verify-miss: the store no longer takes ${secrets[0]} for a secret: see SECRET_RANDOM_LENGTH`);
    }
    unknownSecretBodies = secrets.map(verifyBody);
  }
  return unknownSecretBodies;
}

/** A verification scenario, in the latest API version (the first has no `verifyApiKey`). */
const verify = (name: 'verify' | 'verify-miss', description: string, bodies: Scenario['bodies']): Scenario => ({
  name,
  description: `verification: ${description}`,
  method: 'POST',
  reference: name,
  paths: () => [VERIFY],
  bodies,
  headers: { 'vendor-version': LATEST_API_VERSION },
});

/** The verification scenarios: the real server and the express-validator reference run both. */
export const VERIFY_SCENARIOS: readonly Scenario[] = [
  {
    ...verify(
      'verify',
      `the secrets of ${KNOWN_KEYS} active keys in turn (cache hits after the warm-up)`,
      ({ secrets }) => secrets.map(verifyBody),
    ),
    knownKeys: true,
    warmUpEveryBody: true,
  },
  verify(
    'verify-miss',
    `${UNKNOWN_SECRETS} unknown secrets with valid checksums in turn (each one looked up)`,
    verifyMissBodies,
  ),
];

/** Every scenario run against the real server, in the order they run (updates last: they write). */
export const SCENARIOS: readonly Scenario[] = [
  list('list-20', 'first page, limit=20', () => [`${LIST}?limit=20`]),
  list('list-100', 'first page, limit=100', () => [`${LIST}?limit=100`]),
  { ...list('list-1000', 'first page, limit=1000', () => [`${LIST}?limit=1000`]), reference: 'list-1000' },
  list('after', 'limit=20, after_id = a sampled key (deep pages over the whole collection)', listPaths('after_id')),
  list('before', 'limit=20, before_id = a sampled key', listPaths('before_id')),
  list('status-after', 'status (cycling the 3 values) + after_id', listPaths('after_id', byStatus)),
  list('workspace-after', 'workspace_id (cycling 3 workspaces) + after_id', listPaths('after_id', byWorkspace)),
  list('creator-after', 'created_by_user_id (cycling 5 users) + after_id', listPaths('after_id', byCreator)),
  list('combo-after', 'status + workspace_id + created_by_user_id + after_id', listPaths('after_id', combined)),
  list('status-before', 'status + before_id', listPaths('before_id', byStatus)),
  list('workspace-before', 'workspace_id + before_id', listPaths('before_id', byWorkspace)),
  list('creator-before', 'created_by_user_id + before_id', listPaths('before_id', byCreator)),
  list('combo-before', 'status + workspace_id + created_by_user_id + before_id', listPaths('before_id', combined)),
  {
    ...list('latest-20', 'latest version: first page, limit=20 (each key with its permissions and metadata)', () => [
      `${LIST}?limit=20`,
    ]),
    headers: { 'vendor-version': LATEST_API_VERSION },
  },
  {
    ...list(
      'latest-1000',
      'latest version: first page, limit=1000 (each key with its permissions and metadata)',
      () => [`${LIST}?limit=1000`],
    ),
    reference: 'list-1000',
    headers: { 'vendor-version': LATEST_API_VERSION },
  },
  {
    ...list(
      'expired-after',
      'latest version: status=expired + after_id (a few per cent of keys)',
      listPaths('after_id', () => '&status=expired'),
    ),
    headers: { 'vendor-version': LATEST_API_VERSION },
  },
  {
    ...list(
      'active-after',
      'latest version: status=active + after_id (expired keys left out)',
      listPaths('after_id', () => '&status=active'),
    ),
    headers: { 'vendor-version': LATEST_API_VERSION },
  },
  ...PERMISSION_SCENARIOS,
  ...AUDIT_SCENARIOS,
  ...VERIFY_SCENARIOS,
  list('get', 'retrieve one key (cycling sampled keys)', ({ keyIds }) => keyIds.map((id) => `${LIST}/${id}`)),
  {
    name: 'update',
    description: 'rename a key, cycling distinct sampled keys',
    method: 'POST',
    reference: 'list-20',
    paths: ({ keyIds }) => keyIds.map((id) => `${LIST}/${id}`),
    bodyTemplate: '{"name":"bench update %n"}',
  },
  {
    name: 'update-hot',
    description: 'rename one and the same key over and over',
    method: 'POST',
    reference: 'list-20',
    paths: ({ keyIds }) => [`${LIST}/${keyIds[0] ?? 'apikey_missing'}`],
    bodyTemplate: '{"name":"bench hot %n"}',
  },
];

/** The reference scenarios of every reference: the first page of 20 and of 1000 items. */
export const REFERENCE_SCENARIOS: readonly Scenario[] = [
  { ...list('list-20', 'precomputed first page, 20 items', () => [`${LIST}?limit=20`]) },
  { ...list('list-1000', 'precomputed first page, 1000 items', () => [`${LIST}?limit=1000`]), reference: 'list-1000' },
];

/**
 * What quick mode runs on each database, so that it stays under three minutes with the build: list, deep pages,
 * audit trail pages, verification and update on the larger SQLite store, the same pages on the smaller one (for the
 * size ratios), list, verification and update on the larger PostgreSQL, and update on two PostgreSQL replicas. (The
 * variants' own are in targets.ts.)
 */
export const QUICK_SCENARIOS: Record<
  'sqlite-small' | 'sqlite-large' | 'postgres-small' | 'postgres-large' | 'postgres-replicas',
  string[]
> = {
  'sqlite-small': ['after', 'combo-after', 'permission-after', 'audit-after', 'audit-types-after'],
  'sqlite-large': [
    'list-20',
    'list-1000',
    'after',
    'combo-after',
    'permission-after',
    'audit-after',
    'audit-types-after',
    'verify',
    'verify-miss',
    'update',
  ],
  'postgres-small': [],
  'postgres-large': ['list-20', 'verify', 'verify-miss', 'update'],
  'postgres-replicas': ['update'],
};
