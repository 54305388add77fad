import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const VERSION = LATEST_API_VERSION;
const EVENTS = '/v1/organizations/audit_events';
const MISSING = 'auditevt_0000000000000000000000000000';

// From 2026-10-21 on.
describe('getAuditEvent', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  /** The ID of the organization's own `organization.created` event. */
  let createdId: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('audit event tests');
    const page = await server.store.listAuditEvents({
      organizationId: org.id,
      limit: 1,
      filters: { types: ['organization.created'] },
    });
    createdId = page.kind === 'page' ? (page.events[0]?.id ?? '') : '';
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function get(id: string, adminKey: string | null = org.adminKey, query = '') {
    const result = await server.request(`${EVENTS}/${encodeURIComponent(id)}${query}`, {
      headers: adminKey ? authHeaders(adminKey, { 'vendor-version': VERSION }) : { 'vendor-version': VERSION },
    });
    expectMatchesSpec('getAuditEvent', result.response, result.body, VERSION);
    return result;
  }

  describe('200 the audit event [2026-10-21]', () => {
    it('returns the event as the list shows it', async () => {
      const listed = await server.request(`${EVENTS}?limit=1000`, {
        headers: authHeaders(org.adminKey, { 'vendor-version': VERSION }),
      });
      const { data } = listed.body as { data: { id: string }[] };

      for (const event of data) {
        const { response, body } = await get(event.id);
        expect(response.status).toBe(200);
        expect(body).toEqual(event);
      }
      expect(data.map((event) => event.id)).toContain(createdId);
    });

    it('shows the creation of the organization', async () => {
      const { body } = await get(createdId);

      expect(body).toMatchObject({
        id: createdId,
        type: 'organization.created',
        target: { type: 'organization', id: org.id },
        changes: { name: { from: null, to: 'audit event tests' } },
      });
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    it('a request of version 2023-06-01', async () => {
      const result = await server.request(`${EVENTS}/${createdId}`, { headers: authHeaders(org.adminKey) });

      expectError(result, {
        operationId: undefined,
        status: 400,
        type: 'invalid_request_error',
        message: 'vendor-version: getAuditEvent is available from API version 2026-10-21; this request uses 2023-06-01',
      });
    });

    it('an ID over 255 characters', async () => {
      expectError(await get(`auditevt_${'a'.repeat(255)}`), {
        operationId: 'getAuditEvent',
        status: 400,
        type: 'invalid_request_error',
        message: /^audit_event_id: must NOT have more than 255 characters/,
        version: VERSION,
      });
    });

    // Only the list filters take an empty value as no filter; here they are unknown parameters, refused before the
    // ID is looked up.
    it.each([
      ['an event of the organization', () => createdId],
      ['an ID that names nothing', () => MISSING],
      ['an ID of no event shape', () => 'v1'],
    ])('an empty list filter (occurred_after=, target_id=), for %s', async (_, id) => {
      for (const filter of ['occurred_after', 'target_id']) {
        expectError(await get(id(), org.adminKey, `?${filter}=`), {
          operationId: 'getAuditEvent',
          status: 400,
          type: 'invalid_request_error',
          message: `${filter}: unknown query parameter`,
          version: VERSION,
        });
      }
    });
  });

  describe('401 authentication_error [2026-10-21]', () => {
    it('refuses a request without an admin key', async () => {
      expectError(await get(createdId, null), {
        operationId: 'getAuditEvent',
        status: 401,
        type: 'authentication_error',
        message: 'x-api-key header is required',
        version: VERSION,
      });
    });
  });

  describe('403 permission_error [2026-10-21]', () => {
    it('refuses a regular API key', async () => {
      const { secret } = await server.store.createApiKey({
        organizationId: org.id,
        name: 'regular',
        createdBy: { type: 'user', id: 'user_a' },
      });

      expectError(await get(createdId, secret), {
        operationId: 'getAuditEvent',
        status: 403,
        type: 'permission_error',
        message: /admin key/,
        version: VERSION,
      });
    });
  });

  describe('404 not_found_error [2026-10-21]', () => {
    it("answers an unknown ID, and another organization's event, alike", async () => {
      const other = await server.createOrganization('someone else');

      for (const id of [MISSING, createdId]) {
        expectError(await get(id, other.adminKey), {
          operationId: 'getAuditEvent',
          status: 404,
          type: 'not_found_error',
          message: `audit_event_id: no audit event with ID ${id}`,
          version: VERSION,
        });
      }
    });
  });

  describe('429 rate_limit_error [2026-10-21]', () => {
    it('refuses a request over the admin key budget with retry-after', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const send = () =>
          limited.request(`${EVENTS}/${MISSING}`, {
            headers: authHeaders(limited.adminKey, { 'vendor-version': VERSION }),
          });
        expect((await send()).response.status).toBe(404);

        const result = await send();

        expectError(result, {
          operationId: 'getAuditEvent',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this admin key/,
          version: VERSION,
        });
        expect(result.response.headers.get('retry-after')).toBe('1');
      } finally {
        await limited.close();
      }
    });
  });

  describe('500 api_error [2026-10-21]', () => {
    it('answers a generic error when the store fails, and logs the details', async () => {
      vi.spyOn(server.store, 'getAuditEvent').mockRejectedValueOnce(new Error('boom: audit table gone'));

      expectInternalError(server.logLines, await get(createdId), 'boom: audit table gone');
    });

    it('answers a generic error when the store returns an event the spec does not allow', async () => {
      const stored = await server.store.getAuditEvent(org.id, createdId);
      vi.spyOn(server.store, 'getAuditEvent').mockResolvedValueOnce(stored && { ...stored, id: 'not an event ID' });

      expectError(await get(createdId), {
        operationId: 'getAuditEvent',
        status: 500,
        type: 'api_error',
        message: 'internal server error',
        version: VERSION,
      });
    });
  });

  describe('503 service_unavailable_error [2026-10-21]', () => {
    it('answers 503 with retry-after when the database does not answer in time', async () => {
      const unavailable = new DatabaseUnavailableError('timeout', 'the database is unavailable (timeout): no answer');
      vi.spyOn(server.store, 'getAuditEvent').mockRejectedValueOnce(unavailable);

      expectUnavailable(server.logLines, await get(createdId), 'getAuditEvent', VERSION);
    });
  });
});
