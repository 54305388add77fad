import { userInfo } from 'node:os';
import { DEFAULT_ORGANIZATION } from '@apikeys/server/testing';
import type { AuditEventRecord, Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorName } from '../src/store-session.js';
import { osUser } from './cli-output.js';
import { type CliDatabase, ENGINES } from './databases.js';
import { runCli, runCliJson } from './run-cli.js';

/** The actor every operator command must record. */
const OPERATOR = { type: 'operator', name: osUser() } as const;

/** What every event of an operator command has: no request, no client, no rotation, no seeded count. */
const OPERATOR_EVENT = {
  id: expect.stringMatching(/^auditevt_[0-9a-f]{14}[A-Za-z0-9]{16}$/),
  occurredAt: expect.any(Number),
  actor: OPERATOR,
  related: null,
  keyCount: null,
  requestId: null,
  client: null,
};

// Each operator command (on the database directly) records its change as made by the operator who ran it, named by
// the OS user. One database per engine; each test runs one command and checks the events it added, read with the
// store.
describe.each(ENGINES)('operator commands record their changes on $engine', ({ create }) => {
  let db: CliDatabase;
  let store: Store;
  let organizationId: string;
  let adminKeyId: string;

  /** The organization's trail, newest first. */
  async function trail(organization: string): Promise<AuditEventRecord[]> {
    const result = await store.listAuditEvents({ organizationId: organization, limit: 1000 });
    if (result.kind !== 'page') {
      throw new Error(`a list without a cursor found no page: ${result.kind}`);
    }
    expect(result.hasMore).toBe(false);
    return result.events;
  }

  /** Runs a command that must succeed, and returns its output and the events it added to the trail, newest first. */
  async function withEvents<T>(args: string[]): Promise<{ output: T; added: AuditEventRecord[] }> {
    const before = await trail(organizationId);
    const output = await runCliJson<T>(args, db.env);
    const after = await trail(organizationId);
    const added = after.slice(0, after.length - before.length);
    expect(after.slice(added.length)).toEqual(before);
    return { output, added };
  }

  beforeAll(async () => {
    db = await create();
    await runCliJson(['migrate'], db.env);
    store = await db.openStore();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('orgs create records organization.created, by the operator, in the new organization', async () => {
    const organization = await runCliJson<{ id: string }>(['orgs', 'create', '--name', 'Acme Corp'], db.env);
    organizationId = organization.id;

    expect(await trail(organizationId)).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'organization.created',
        target: { type: 'organization', id: organizationId },
        changes: { name: { from: null, to: 'Acme Corp' } },
      },
    ]);
  });

  it('admin-keys create records admin_key.created with the initial name and status', async () => {
    const { output, added } = await withEvents<{ id: string }>([
      'admin-keys',
      'create',
      '--name',
      'ops',
      '--org',
      organizationId,
    ]);
    adminKeyId = output.id;

    expect(added).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'admin_key.created',
        target: { type: 'admin_key', id: adminKeyId },
        changes: { name: { from: null, to: 'ops' }, status: { from: null, to: 'active' } },
      },
    ]);
  });

  it('admin-keys disable records admin_key.disabled', async () => {
    const { added } = await withEvents(['admin-keys', 'disable', adminKeyId]);

    expect(added).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'admin_key.disabled',
        target: { type: 'admin_key', id: adminKeyId },
        changes: { status: { from: 'active', to: 'disabled' } },
      },
    ]);
  });

  it('admin-keys enable records admin_key.enabled, and enabling an active admin key records nothing', async () => {
    const { added } = await withEvents(['admin-keys', 'enable', adminKeyId]);
    const again = await withEvents(['admin-keys', 'enable', adminKeyId]);

    expect(added).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'admin_key.enabled',
        target: { type: 'admin_key', id: adminKeyId },
        changes: { status: { from: 'disabled', to: 'active' } },
      },
    ]);
    expect(again.added).toEqual([]);
  });

  it('keys create records api_key.created with the initial name and status', async () => {
    const { output, added } = await withEvents<{ id: string }>([
      'keys',
      'create',
      '--name',
      'billing',
      '--org',
      organizationId,
      '--status',
      'inactive',
    ]);

    expect(added).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'api_key.created',
        target: { type: 'api_key', id: output.id },
        changes: { name: { from: null, to: 'billing' }, status: { from: null, to: 'inactive' } },
      },
    ]);
  });

  it('keys seed --count 25 records one api_key.seeded event for all the keys, with key_count 25', async () => {
    const { output, added } = await withEvents(['keys', 'seed', '--count', '25', '--org', organizationId]);

    expect(output).toEqual({ created: 25 });
    expect(added).toEqual([
      {
        ...OPERATOR_EVENT,
        type: 'api_key.seeded',
        target: { type: 'organization', id: organizationId },
        changes: {},
        keyCount: 25,
      },
    ]);
  });

  it('a command that fails records nothing, and no command touched the default organization', async () => {
    const before = await trail(organizationId);

    const result = await runCli(['admin-keys', 'disable', 'adminkey_missing'], db.env);

    expect(result.code).toBe(2);
    expect(await trail(organizationId)).toEqual(before);
    expect(await trail(DEFAULT_ORGANIZATION.id)).toEqual([]);
  });
});

describe('operatorName', () => {
  it('is the OS user running the CLI', () => {
    expect(operatorName()).toBe(userInfo().username);
  });

  it('is null when the OS cannot tell the user, or tells an empty name', () => {
    const unknownUser = () => {
      throw Object.assign(new Error('uv_os_get_passwd returned ENOENT'), { code: 'ENOENT' });
    };

    expect(operatorName(unknownUser)).toBeNull();
    expect(operatorName(() => ({ username: '' }))).toBeNull();
    expect(operatorName(() => ({ username: 'alice' }))).toBe('alice');
  });
});
