import { API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  expectError,
  expectMatchesSpec,
  snapshotKeys,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpecOperation, specOperations } from '../../src/spec/spec-operations.js';

type Parameter = { name: string; in: string; $ref?: string };

/** The query parameter names an operation of `document` declares, those of its path included. */
function declaredNames(document: OpenApiDocument, { method, path }: SpecOperation): string[] {
  const shared = document.components.parameters as Record<string, Parameter>;
  const item = document.paths[path] as Record<string, { parameters?: Parameter[] }> & { parameters?: Parameter[] };
  return [...(item.parameters ?? []), ...(item[method]?.parameters ?? [])]
    .map((parameter) => (parameter.$ref ? shared[parameter.$ref.replace('#/components/parameters/', '')] : parameter))
    .filter((parameter): parameter is Parameter => parameter?.in === 'query')
    .map((parameter) => parameter.name);
}

/** Every query parameter name `document` declares, whatever its operation. */
function everyName(document: OpenApiDocument): string[] {
  return [...new Set(specOperations(document).flatMap((operation) => declaredNames(document, operation)))];
}

/** The ways a client may write a name that is not the name itself, as PHP, Rails and qs write arrays and maps. */
const BRACKETED = ['[]', '[0]', '[eq]'] as const;

// Query parameter names are exact on every operation of every version: a name the operation does not declare is a
// 400 naming it, bracketed forms of the names it does declare included (the validator would read `type[]` as
// `type`). Each value sent is one the exact name accepts, so that only the name can be what is refused.
describe('query parameter names are exact', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let keyId: string;
  let auditEventId: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('exact names');
    const { apiKey } = await server.store.createApiKey({
      organizationId: org.id,
      name: 'named',
      createdBy: { id: 'user_exact', type: 'user' },
      workspaceId: 'wrkspc_exact',
    });
    keyId = apiKey.id;
    const events = await server.store.listAuditEvents({ organizationId: org.id, limit: 1 });
    auditEventId = events.kind === 'page' ? (events.events[0]?.id ?? '') : '';
    expect(auditEventId).not.toBe('');
  });
  afterAll(() => server.close());

  /** A value the parameter `name` of `operation` accepts. */
  function acceptedValue(operation: SpecOperation, name: string): string {
    const cursor = operation.operationId === 'listAuditEvents' ? auditEventId : keyId;
    const values: Record<string, string> = {
      before_id: cursor,
      after_id: cursor,
      limit: '5',
      status: 'active',
      workspace_id: 'wrkspc_exact',
      created_by_user_id: 'user_exact',
      permission: 'documents.read',
      target_id: keyId,
      actor_id: 'adminkey_exact',
      type: 'api_key.created',
      occurred_after: '2000-01-01T00:00:00Z',
      occurred_before: '2999-01-01T00:00:00Z',
    };
    const value = values[name];
    if (value === undefined) {
      throw new Error(`no value for the query parameter ${name}: add one`);
    }
    return value;
  }

  function send(version: ApiVersion, operation: SpecOperation, query: string) {
    const path = operation.path.replace('{api_key_id}', keyId).replace('{audit_event_id}', auditEventId);
    const post = operation.method === 'post';
    const body: Record<string, string> = {
      updateApiKey: '{}',
      rotateApiKey: '{"grace_period_seconds": 60}',
      createApiKey: '{"name": "never created"}',
      verifyApiKey: '{"key": "sk-api-unknown"}',
      reportKeyUsage: `{"uses": [{"api_key_id": "${keyId}", "used_at": "2026-01-01T00:00:00Z"}]}`,
    };
    return server.request(`${path}?${query}`, {
      method: operation.method.toUpperCase(),
      headers: authHeaders(org.adminKey, {
        'vendor-version': version,
        ...(post ? { 'content-type': 'application/json' } : {}),
      }),
      ...(post ? { body: body[operation.operationId] ?? '{}' } : {}),
    });
  }

  describe.each(API_VERSIONS)('in %s', (version) => {
    const document = loadSpec(version);
    const names = everyName(document);

    describe.each(specOperations(document).map((operation) => ({ ...operation, name: operation.operationId })))(
      '$name',
      (operation) => {
        const declared = declaredNames(document, operation);

        it('refuses, naming it, every name it does not declare, and the bracketed forms of those it does', async () => {
          const before = await snapshotKeys(server.store, org.id);
          const refused = [
            'colour',
            ...names.filter((name) => !declared.includes(name)),
            ...names.flatMap((name) => BRACKETED.map((brackets) => `${name}${brackets}`)),
          ];

          for (const name of refused) {
            const base = name.replace(/\[.*$/, '');
            const value = names.includes(base) ? acceptedValue(operation, base) : 'red';
            const result = await send(version, operation, `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);

            expectError(result, {
              operationId: operation.operationId as never,
              status: 400,
              type: 'invalid_request_error',
              message: new RegExp(`^${name.replaceAll('[', '\\[').replaceAll(']', '\\]')}: unknown query parameter`),
              version,
            });
          }
          expect(await snapshotKeys(server.store, org.id)).toEqual(before);
        });

        if (declared.length > 0) {
          it('takes each name it declares, with the value the refusals above sent', async () => {
            for (const name of declared) {
              const result = await send(
                version,
                operation,
                `${name}=${encodeURIComponent(acceptedValue(operation, name))}`,
              );

              expect(result.response.status, `${name}: ${result.text}`).toBe(200);
              expectMatchesSpec(operation.operationId as never, result.response, result.body, version);
            }
          });
        }
      },
    );
  });

  it('refuses a bracketed name sent as it is, not percent-encoded (type[]=...)', async () => {
    const result = await server.request('/v1/organizations/audit_events?type[]=api_key.created', {
      headers: authHeaders(org.adminKey, { 'vendor-version': LATEST_API_VERSION }),
    });

    expectError(result, {
      operationId: 'listAuditEvents',
      status: 400,
      type: 'invalid_request_error',
      message: 'type[]: unknown query parameter; names are exact (an array parameter is repeated: name=a&name=b)',
      version: LATEST_API_VERSION,
    });
  });
});
