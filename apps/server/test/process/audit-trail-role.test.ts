import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { authHeaders, startTestServer, type TestServer } from '@apikeys/server/testing';
import { openStore, type Store } from '@apikeys/store';
import { createTestDatabase, onPostgres, TEST_POSTGRES_URL, type TestDatabase } from '@apikeys/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The role recipe of docs/deploy.md, exactly as documented. */
const RECIPE = readFileSync(new URL('../../../../docs/sql/server-role.sql', import.meta.url), 'utf8');

describe('the documented PostgreSQL role of the server', () => {
  const role = `apikeys_server_${randomBytes(4).toString('hex')}`;
  let database: TestDatabase;
  let server: TestServer;
  /** The test database's URL, logging in as the role. */
  let asRole: string;

  let owner: Store;

  beforeAll(async () => {
    database = await createTestDatabase();
    const opened = await openStore({ kind: 'postgres', url: database.url });
    await opened.migrator.migrateToLatest();
    owner = opened.store;
    await onPostgres(database.url, (client) => client.query(RECIPE.replaceAll('apikeys_server', role)));
    const url = new URL(database.url);
    url.username = role;
    asRole = url.toString();
    // The server opens the database as the role, and checks its migrations as it does at every start. Admin keys are
    // an operator's to create, as the owner.
    const served = await openStore({ kind: 'postgres', url: asRole });
    served.store.createAdminKey = owner.createAdminKey.bind(owner);
    server = await startTestServer({ opened: served });
  });
  afterAll(async () => {
    await server?.close();
    await owner?.close();
    await database?.drop();
    await onPostgres(TEST_POSTGRES_URL, (client) => client.query(`drop role if exists ${role}`));
  });

  it('serves the API and records every change in the audit trail', async () => {
    const headers = authHeaders(server.adminKey, {
      'vendor-version': LATEST_API_VERSION,
      'content-type': 'application/json',
    });
    const created = await server.request('/v1/organizations/api_keys', {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'as the role', permissions: ['documents.read'] }),
    });
    const { id } = created.body as { id: string };
    // A change of permissions rewrites the key's rows of the permission index (triggers run as the role).
    const renamed = await server.request(`/v1/organizations/api_keys/${id}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'renamed as the role', permissions: ['documents.*'] }),
    });
    const events = await server.request(`/v1/organizations/audit_events?target_id=${id}`, { headers });
    const granted = await server.request('/v1/organizations/api_keys?permission=documents.write', { headers });

    expect([created.response.status, renamed.response.status, events.response.status]).toEqual([200, 200, 200]);
    expect((events.body as { data: { type: string }[] }).data.map((event) => event.type)).toEqual([
      'api_key.updated',
      'api_key.created',
    ]);
    expect((granted.body as { data: { id: string }[] }).data.map((key) => key.id)).toEqual([id]);
  });

  it.each([
    ['update an event', 'update audit_events set type = type', /permission denied/],
    ['delete an event', 'delete from audit_events', /permission denied/],
    ['truncate the trail', 'truncate audit_events', /permission denied/],
    ['drop a trigger', 'drop trigger audit_events_immutable on audit_events', /must be owner/],
    ['disable the triggers', 'alter table audit_events disable trigger all', /must be owner/],
    ['drop the table', 'drop table audit_events', /must be owner/],
  ])('cannot %s', async (_, statement, refusal) => {
    const before = await onPostgres(database.url, (client) => client.query('select * from audit_events order by id'));

    await expect(onPostgres(asRole, (client) => client.query(statement))).rejects.toThrow(refusal);
    const after = await onPostgres(database.url, (client) => client.query('select * from audit_events order by id'));
    expect(after.rows).toEqual(before.rows);
    expect(after.rows.length).toBeGreaterThan(0);
  });
});
