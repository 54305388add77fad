import type { ApiKey } from '@apikeys/api-types';
import { DEFAULT_ORGANIZATION } from '@apikeys/server/testing';
import { hashSecret, openStore, parseDatabaseUrl, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedApiKeyJson } from '../src/format/stored-records.js';
import { expectedHint, FORMAT, runCliJson, tempDatabase } from './run-cli.js';

interface AdminKeyOutput {
  id: string;
  organization_id: string;
  name: string;
  partial_key_hint: string;
  status: string;
  key?: string;
}

type ApiKeyOutput = ApiKey & { key: string };

interface Organization {
  id: string;
  name: string;
}

// One database for the whole file: each test builds on what the previous ones created, as an operator would.
describe('apikeys commands on one database', () => {
  const db = tempDatabase();
  const cli = <T>(...args: string[]) => runCliJson<T>(args, db.env);
  let acme: Organization;

  afterAll(() => db.remove());

  it('migrate on a new database applies the initial migration, and a second run applies nothing', async () => {
    const first = await cli<{ applied: string[] }>('migrate');
    const second = await cli<{ applied: string[] }>('migrate');

    expect(first.applied).toContain('0001-initial');
    expect(second).toEqual({ applied: [] });
  });

  it('orgs create prints the new organization, and orgs list shows it after the default organization', async () => {
    acme = await cli<Organization>('orgs', 'create', '--name', 'Acme Corp');
    const list = await cli<{ data: Organization[] }>('orgs', 'list');

    expect(acme).toEqual({ id: expect.stringMatching(FORMAT.orgId), name: 'Acme Corp' });
    expect(list).toEqual({ data: [DEFAULT_ORGANIZATION, acme] });
  });

  describe('keys and admin keys', () => {
    // Holding a connection open keeps the CLI's writes in the -wal file, so the plain-text checks read them there too.
    let store: Store;
    beforeAll(async () => {
      ({ store } = await openStore(parseDatabaseUrl(db.env.DATABASE_URL)));
    });
    afterAll(() => store.close());

    /** A key as the operator commands print it, read straight from the store; undefined when there is none. */
    const storedJson = async (organizationId: string, id: string) => {
      const key = await store.getApiKey(organizationId, id);
      return key && storedApiKeyJson(key);
    };

    /** Checks that the secret's hash is in the database files (so they are the right files) and the secret is not. */
    const expectStoredAsHashOnly = (secret: string) => {
      const files = db.fileBytes();
      expect(files).toHaveLength(2);
      expect(files.some((bytes) => bytes.includes(hashSecret(secret)))).toBe(true);
      expect(files.filter((bytes) => bytes.includes(secret))).toHaveLength(0);
    };

    let adminKey: AdminKeyOutput;

    it('admin-keys create without --org creates an active admin key of the default organization whose secret works', async () => {
      adminKey = await cli<AdminKeyOutput>('admin-keys', 'create', '--name', 'ops');

      expect(adminKey).toEqual({
        id: expect.stringMatching(FORMAT.adminKeyId),
        organization_id: DEFAULT_ORGANIZATION.id,
        name: 'ops',
        partial_key_hint: expect.stringMatching(FORMAT.hint),
        status: 'active',
        key: expect.stringMatching(FORMAT.adminSecret),
      });
      const secret = adminKey.key ?? '';
      expect(adminKey.partial_key_hint).toBe(expectedHint(secret));
      expect(await store.findCredential(hashSecret(secret))).toEqual({
        kind: 'admin_key',
        adminKey: {
          id: adminKey.id,
          organizationId: DEFAULT_ORGANIZATION.id,
          name: 'ops',
          partialKeyHint: adminKey.partial_key_hint,
          status: 'active',
        },
      });
      expectStoredAsHashOnly(secret);
    });

    it('admin-keys create with --org creates the admin key in that organization', async () => {
      const created = await cli<AdminKeyOutput>('admin-keys', 'create', '--name', 'acme ops', '--org', acme.id);

      expect(created).toMatchObject({ organization_id: acme.id, name: 'acme ops', status: 'active' });
      expect(await store.findCredential(hashSecret(created.key ?? ''))).toMatchObject({
        kind: 'admin_key',
        adminKey: { id: created.id, organizationId: acme.id },
      });
    });

    it('admin-keys disable prints the key as disabled, without its secret, and the store reports it disabled', async () => {
      const disabled = await cli<AdminKeyOutput>('admin-keys', 'disable', adminKey.id);

      const { key: _secret, ...withoutSecret } = adminKey;
      expect(disabled).toEqual({ ...withoutSecret, status: 'disabled' });
      expect(await store.findCredential(hashSecret(adminKey.key ?? ''))).toMatchObject({
        kind: 'admin_key',
        adminKey: { id: adminKey.id, status: 'disabled' },
      });
    });

    it('admin-keys enable makes a disabled admin key active again', async () => {
      const enabled = await cli<AdminKeyOutput>('admin-keys', 'enable', adminKey.id);

      expect(enabled).toMatchObject({ id: adminKey.id, status: 'active' });
      expect(await store.findCredential(hashSecret(adminKey.key ?? ''))).toMatchObject({
        kind: 'admin_key',
        adminKey: { id: adminKey.id, status: 'active' },
      });
    });

    it('verifier-keys create, disable and enable: a key that may only verify, stored as its hash only', async () => {
      const created = await cli<AdminKeyOutput>('verifier-keys', 'create', '--name', 'gateway', '--org', acme.id);
      const secret = created.key ?? '';
      const disabled = await cli<AdminKeyOutput>('verifier-keys', 'disable', created.id);
      const whileDisabled = await store.findCredential(hashSecret(secret));
      const enabled = await cli<AdminKeyOutput>('verifier-keys', 'enable', created.id);

      expect(created).toEqual({
        id: expect.stringMatching(/^verifierkey_[A-Za-z0-9]{24}$/),
        organization_id: acme.id,
        name: 'gateway',
        partial_key_hint: expectedHint(secret),
        status: 'active',
        key: expect.stringMatching(/^sk-vfy-[A-Za-z0-9]{49}$/),
      });
      expect(disabled).toEqual({ ...created, key: undefined, status: 'disabled' });
      expect(whileDisabled).toMatchObject({
        kind: 'verifier_key',
        verifierKey: { id: created.id, status: 'disabled' },
      });
      expect(enabled).toMatchObject({ id: created.id, status: 'active' });
      expect(await store.findCredential(hashSecret(secret))).toMatchObject({
        kind: 'verifier_key',
        verifierKey: { id: created.id, organizationId: acme.id, status: 'active' },
      });
      expectStoredAsHashOnly(secret);
    });

    it('verifier-keys disable of an unknown ID is a usage error', async () => {
      await expect(cli('verifier-keys', 'disable', 'verifierkey_nosuchkey')).rejects.toThrow(
        /verifier key verifierkey_nosuchkey does not exist/,
      );
    });

    it('keys create without options creates an active key of the default organization created by the CLI service account', async () => {
      const created = await cli<ApiKeyOutput>('keys', 'create', '--name', 'Production backend');

      expect(created).toEqual({
        id: expect.stringMatching(FORMAT.apiKeyId),
        type: 'api_key',
        name: 'Production backend',
        workspace_id: null,
        created_at: expect.stringMatching(FORMAT.createdAt),
        created_by: { id: 'svcacct_apikeys_cli', type: 'service_account' },
        partial_key_hint: expectedHint(created.key),
        status: 'active',
        key: expect.stringMatching(FORMAT.apiSecret),
      });
      expect(Math.abs(Date.parse(created.created_at) - Date.now())).toBeLessThan(10 * 60_000);
      const { key, ...apiKey } = created;
      expect(await storedJson(DEFAULT_ORGANIZATION.id, created.id)).toEqual(apiKey);
      expect(await store.findCredential(hashSecret(key))).toEqual({
        kind: 'api_key',
        organizationId: DEFAULT_ORGANIZATION.id,
      });
      expectStoredAsHashOnly(key);
    });

    it('keys create with every option stores the key in that organization, workspace, creator and status', async () => {
      const created = await cli<ApiKeyOutput>(
        ...['keys', 'create', '--name', 'archived one', '--org', acme.id, '--workspace-id', 'wrkspc_01'],
        ...['--created-by', 'user_01', '--status', 'archived'],
      );

      expect(created).toMatchObject({
        name: 'archived one',
        workspace_id: 'wrkspc_01',
        created_by: { id: 'user_01', type: 'user' },
        status: 'archived',
      });
      const { key, ...apiKey } = created;
      expect(await storedJson(acme.id, created.id)).toEqual(apiKey);
      expect(await store.getApiKey(DEFAULT_ORGANIZATION.id, created.id)).toBeUndefined();
      expect(await store.findCredential(hashSecret(key))).toEqual({ kind: 'api_key', organizationId: acme.id });
    });
  });
});
