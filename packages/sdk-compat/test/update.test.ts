import { type Anthropic, BadRequestError } from '@anthropic-ai/sdk';
import { expectMatchesSpec, startTestServer, type TestServer } from '@apikeys/server/testing';
import { nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedRecord, storeKey } from './support/keys.js';
import { SDK_API_VERSION, sdkClient } from './support/sdk.js';

describe('SDK update (client.beta.organization.apiKeys.update)', () => {
  let server: TestServer;
  let client: Anthropic;
  let organizationId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.createOrganization('sdk update');
    organizationId = org.id;
    client = sdkClient(org.adminKey, server.baseUrl);
  });
  afterAll(() => server.close());

  const newKey = (name: string) => storeKey(server.store, organizationId, { name });
  const stored = (id: string) => storedRecord(server.store, organizationId, id);

  it('renames a key: the response and the store hold the new name, nothing else changes', async () => {
    const before = await newKey('old name');
    const shownBefore = await client.beta.organization.apiKeys.retrieve(before.id);

    const { data, response } = await client.beta.organization.apiKeys
      .update(before.id, { name: 'new name' })
      .withResponse();

    expectMatchesSpec('updateApiKey', response, data, SDK_API_VERSION);
    expect(data).toEqual({ ...shownBefore, name: 'new name' });
    expect(await stored(before.id)).toEqual({ ...before, name: 'new name' });
  });

  it.each([
    ['deactivates', 'inactive'],
    ['archives', 'archived'],
  ] as const)('%s a key', async (_verb, status) => {
    const before = await newKey(`to be ${status}`);

    const updated = await client.beta.organization.apiKeys.update(before.id, { status });

    expect([updated.status, updated.name]).toEqual([status, before.name]);
    expect(await stored(before.id)).toEqual({ ...before, status });
  });

  it('reactivates an inactive key', async () => {
    const before = await storeKey(server.store, organizationId, { name: 'switched off', status: 'inactive' });

    const updated = await client.beta.organization.apiKeys.update(before.id, { status: 'active' });

    expect(updated.status).toBe('active');
    expect((await stored(before.id)).status).toBe('active');
  });

  it('name: null leaves the name unchanged while the status changes', async () => {
    const before = await newKey('kept name');

    const updated = await client.beta.organization.apiKeys.update(before.id, { name: null, status: 'inactive' });

    expect([updated.name, updated.status]).toEqual(['kept name', 'inactive']);
    expect(await stored(before.id)).toEqual({ ...before, status: 'inactive' });
  });

  it('name: null alone, and an empty update, change nothing and return the key', async () => {
    const before = await newKey('untouched');
    const shownBefore = await client.beta.organization.apiKeys.retrieve(before.id);

    const nullName = await client.beta.organization.apiKeys.update(before.id, { name: null });
    const empty = await client.beta.organization.apiKeys.update(before.id, {});

    expect([nullName, empty]).toEqual([shownBefore, shownBefore]);
    expect(await stored(before.id)).toEqual(before);
  });

  it('an expired key can be renamed and archived; reactivating it is a BadRequestError', async () => {
    const before = await storeKey(server.store, organizationId, { name: 'expired', expiresAt: nowMicros() - 1000 });

    const renamed = await client.beta.organization.apiKeys.update(before.id, { name: 'expired, renamed' });
    const reactivated = await client.beta.organization.apiKeys
      .update(before.id, { status: 'active' })
      .catch((error: unknown) => error);
    const archived = await client.beta.organization.apiKeys.update(before.id, { status: 'archived' });

    expect([renamed.name, renamed.status]).toEqual(['expired, renamed', 'expired']);
    expect(reactivated).toBeInstanceOf(BadRequestError);
    expect([archived.name, archived.status]).toEqual(['expired, renamed', 'archived']);
    expect(await stored(before.id)).toEqual({ ...before, name: 'expired, renamed', status: 'archived' });
  });
});
