/**
 * The fuzzer's fixture: two organizations, their admin and verifier keys (one of each disabled), API keys in every
 * state, and the values the placeholders stand for, built through the store so that the state holds the facts of
 * `placeholders.ts`.
 */
import { DEFAULT_ORGANIZATION, type TestServer } from '@apikeys/server/testing';
import {
  type ApiKeyRecord,
  type ApiKeyStatus,
  type Creator,
  effectiveStatus,
  hashSecret,
  nowMicros,
  type Principal,
  type Store,
} from '@apikeys/store';
import { instantOf } from './datetimes.js';
import {
  type Bindings,
  ID_PLACEHOLDERS,
  KEY_ID_PLACEHOLDERS,
  KEYS,
  type Organization,
  SECRET_PLACEHOLDERS,
  SECRETS,
  type SecretPlaceholder,
} from './placeholders.js';
import type { ValuePools } from './schema-values.js';

/** The organizations, keys and secrets the fuzzer's placeholders stand for. */
export interface Fixture {
  bindings: Bindings;
  organizations: Readonly<Record<Organization, string>>;
  /** The real ID of each organization's default workspace. */
  defaultWorkspaces: Readonly<Record<Organization, string>>;
  /** Each key of the fixture as stored at the start: what every request meets, but for `lastUsedAt`. */
  keys: ReadonlyMap<string, { organization: Organization; record: ApiKeyRecord }>;
  /** The known values the arbitraries offer where a schema takes them. */
  pools: ValuePools;
  /** The active admin and verifier keys, by the prefix of their secret. */
  credentialsByPrefix: Readonly<Record<string, readonly SecretPlaceholder[]>>;
}

const WORKSPACES = ['wrkspc_fuzz_a', 'wrkspc_fuzz_b'];
const USERS = ['user_fuzz_1', 'user_fuzz_2'];

/** A key to create: its fields, and the placeholders of its ID and secret when requests name it. */
interface KeySpec {
  organization: Organization;
  name: string;
  workspaceId?: string;
  createdBy: Creator;
  status?: ApiKeyStatus;
  expiresAt?: string;
  principal?: Principal;
  id?: (typeof KEY_ID_PLACEHOLDERS)[number];
  secret?: SecretPlaceholder;
}

const user = (index: number): Creator => ({ id: USERS[index % 2] ?? 'user_fuzz_1', type: 'user' });

/** The keys, oldest first: one in each state a request may meet, and names of every kind. */
const KEY_SPECS: readonly KeySpec[] = [
  {
    organization: 'own',
    name: 'oldest',
    workspaceId: 'wrkspc_fuzz_a',
    createdBy: user(0),
    expiresAt: '2150-01-01T00:00:00Z',
    id: '$OLDER_KEY_ID',
  },
  {
    organization: 'own',
    name: 'Billing service',
    workspaceId: 'wrkspc_fuzz_b',
    createdBy: user(1),
    status: 'inactive',
    id: '$INACTIVE_KEY_ID',
    secret: '$INACTIVE_KEY_SECRET',
  },
  { organization: 'own', name: 'é e\u0301 😀 \u202e', createdBy: user(0) },
  {
    organization: 'own',
    name: 'archived one',
    workspaceId: 'wrkspc_fuzz_b',
    createdBy: { id: 'user_fuzz_2', type: 'service_account' },
    status: 'archived',
    id: '$ARCHIVED_KEY_ID',
    secret: '$ARCHIVED_KEY_SECRET',
  },
  { organization: 'own', name: 'x'.repeat(500), workspaceId: 'wrkspc_fuzz_a', createdBy: user(0) },
  {
    organization: 'own',
    name: 'expired one',
    createdBy: user(1),
    expiresAt: '2020-01-01T00:00:00Z',
    id: '$EXPIRED_KEY_ID',
    secret: '$EXPIRED_KEY_SECRET',
  },
  { organization: 'own', name: 'bound to a user', createdBy: user(0), principal: { type: 'user', id: 'user_fuzz_1' } },
  {
    organization: 'own',
    name: 'newest',
    workspaceId: 'wrkspc_fuzz_a',
    createdBy: user(1),
    id: '$KEY_ID',
    secret: '$API_KEY_SECRET',
  },
  {
    organization: 'other',
    name: 'other 1',
    workspaceId: 'wrkspc_fuzz_a',
    createdBy: user(0),
    id: '$OTHER_ORG_KEY_ID',
    secret: '$OTHER_API_KEY_SECRET',
  },
  { organization: 'other', name: 'other 2', workspaceId: 'wrkspc_fuzz_b', createdBy: user(0) },
];

async function createKeys(store: Store, organizations: Record<Organization, string>) {
  const keys = new Map<string, { organization: Organization; record: ApiKeyRecord }>();
  const values: Partial<Bindings> = {};
  for (const spec of KEY_SPECS) {
    const expiresAt = spec.expiresAt === undefined ? null : Number(instantOf(spec.expiresAt));
    const { apiKey, secret } = await store.createApiKey({
      organizationId: organizations[spec.organization],
      name: spec.name,
      ...(spec.principal && !spec.workspaceId
        ? { scope: 'organization' as const, principal: spec.principal }
        : { workspaceId: spec.workspaceId ?? null }),
      createdBy: spec.createdBy,
      status: spec.status ?? 'active',
      expiresAt,
    });
    keys.set(apiKey.id, { organization: spec.organization, record: apiKey });
    if (spec.id) {
      values[spec.id] = apiKey.id;
    }
    if (spec.secret) {
      values[spec.secret] = secret;
    }
  }
  return { keys, values };
}

/** The newest audit event of an organization: one of the fixture's keys' creations. */
async function newestEvent(store: Store, organizationId: string): Promise<string> {
  const result = await store.listAuditEvents({ organizationId, limit: 1 });
  const [event] = result.kind === 'page' ? result.events : [];
  if (!event) {
    throw new Error(`the fixture left no audit event in ${organizationId}`);
  }
  return event.id;
}

/** The fixture's facts that `createFixture` must have made true, checked once. */
function checkFacts(fixture: Fixture): void {
  const now = nowMicros();
  for (const id of KEY_ID_PLACEHOLDERS) {
    const key = fixture.keys.get(fixture.bindings[id]);
    if (!key || key.organization !== KEYS[id].organization || effectiveStatus(key.record, now) !== KEYS[id].state) {
      throw new Error(`the fixture's ${id} is not what placeholders.ts says it is`);
    }
  }
}

/** Creates the fixture on a test server's store (its default organization is `own`). */
export async function createFixture(server: TestServer): Promise<Fixture> {
  const { store } = server;
  const other = await server.createOrganization('fuzz other');
  const organizations = { own: DEFAULT_ORGANIZATION.id, other: other.id };
  const admin = await store.findCredential(hashSecret(server.adminKey));
  if (admin.kind !== 'admin_key') {
    throw new Error("the test server's admin key is not found");
  }
  const disabled = await store.createAdminKey({ organizationId: organizations.own, name: 'fuzz disabled admin' });
  await store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');
  const verifier = await store.createVerifierKey({ organizationId: organizations.own, name: 'fuzz verifier' });
  const otherVerifier = await store.createVerifierKey({ organizationId: other.id, name: 'fuzz other verifier' });
  const disabledVerifier = await store.createVerifierKey({ organizationId: organizations.own, name: 'disabled' });
  await store.setVerifierKeyStatus(disabledVerifier.verifierKey.id, 'disabled');
  const { keys, values } = await createKeys(store, organizations);
  const bindings: Bindings = {
    ...(values as Bindings),
    $ADMIN_KEY: server.adminKey,
    $OTHER_ADMIN_KEY: other.adminKey,
    $DISABLED_ADMIN_KEY: disabled.secret,
    $VERIFIER_KEY: verifier.secret,
    $OTHER_VERIFIER_KEY: otherVerifier.secret,
    $DISABLED_VERIFIER_KEY: disabledVerifier.secret,
    $EVENT_ID: await newestEvent(store, organizations.own),
    $OTHER_ORG_EVENT_ID: await newestEvent(store, other.id),
    $ADMIN_KEY_ID: admin.adminKey.id,
    $OTHER_ADMIN_KEY_ID: other.adminKeyId,
    $HOST: new URL(server.baseUrl).host,
  };
  const defaultWorkspaces = {
    own: (await store.getOrganization(organizations.own))?.defaultWorkspaceId ?? '',
    other: (await store.getOrganization(other.id))?.defaultWorkspaceId ?? '',
  };
  const byPrefix: Record<string, string[]> = { 'sk-api-': [...SECRET_PLACEHOLDERS] };
  for (const id of ID_PLACEHOLDERS) {
    const prefix = /^[a-z]+_/.exec(bindings[id])?.[0] ?? '';
    byPrefix[prefix] = [...(byPrefix[prefix] ?? []), id];
  }
  byPrefix.wrkspc_ = [...WORKSPACES, defaultWorkspaces.own, defaultWorkspaces.other];
  byPrefix.user_ = USERS;
  const credentialsByPrefix: Record<string, SecretPlaceholder[]> = {};
  for (const secret of SECRET_PLACEHOLDERS) {
    const prefix = /^sk-[a-z]+-/.exec(bindings[secret])?.[0] ?? '';
    if (SECRETS[secret].active) {
      credentialsByPrefix[prefix] = [...(credentialsByPrefix[prefix] ?? []), secret];
    }
  }
  const fixture: Fixture = {
    bindings,
    organizations,
    defaultWorkspaces,
    keys,
    pools: { strings: [...ID_PLACEHOLDERS, ...byPrefix.wrkspc_, ...USERS], byPrefix },
    credentialsByPrefix,
  };
  checkFacts(fixture);
  return fixture;
}
