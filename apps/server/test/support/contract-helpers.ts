import type { ApiKey, ApiKeyStatus, CreatedBy, paths } from '@apikeys/api-types';
import type { Client } from 'openapi-fetch';
import { expect } from 'vitest';
import { API_VERSION, authHeaders, type TestServer } from './harness.js';

/** The version header in the form the typed client's `params.header` requires. */
export const VERSION_HEADER = { 'vendor-version': API_VERSION } as const;

/** The path of the list operation. */
export const API_KEYS_PATH = '/v1/organizations/api_keys';

/** The path of one API key, with its ID encoded. */
export function apiKeyPath(id: string): string {
  return `${API_KEYS_PATH}/${encodeURIComponent(id)}`;
}

/** An organization of its own, so a test's data never meets another test's. */
export interface TestOrganization {
  id: string;
  adminKey: string;
  adminKeyId: string;
  client: Client<paths>;
}

/** Creates an organization with an active admin key and a typed client for it. */
export async function createTestOrganization(
  server: TestServer,
  name = 'test organization',
): Promise<TestOrganization> {
  const organization = await server.store.createOrganization(name);
  const { adminKey, secret } = await server.store.createAdminKey({ organizationId: organization.id, name: 'admin' });
  return { id: organization.id, adminKey: secret, adminKeyId: adminKey.id, client: server.clientFor(secret) };
}

/** Fields of a key to create; everything has a default. */
export interface KeyFields {
  name?: string;
  workspaceId?: string | null;
  createdBy?: CreatedBy;
  status?: ApiKeyStatus;
}

/** Creates an API key directly in the store and returns it with its secret. */
export async function createKey(
  server: TestServer,
  organizationId: string,
  fields: KeyFields = {},
): Promise<{ apiKey: ApiKey; secret: string }> {
  return server.store.createApiKey({
    organizationId,
    name: fields.name ?? 'test key',
    workspaceId: fields.workspaceId ?? null,
    createdBy: fields.createdBy ?? { id: 'user_test', type: 'user' },
    status: fields.status ?? 'active',
  });
}

/**
 * Headers of a raw JSON POST: admin key, version and `content-type: application/json`. An `undefined` in
 * `overrides` leaves that header out.
 */
export function jsonPostHeaders(
  adminKey: string,
  overrides: Record<string, string | undefined> = {},
): Record<string, string> {
  const headers: Record<string, string | undefined> = {
    ...authHeaders(adminKey, { 'content-type': 'application/json' }),
    ...overrides,
  };
  return Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * Sends a raw POST to the update operation, for bodies and headers the typed client cannot express. A string
 * body gets fetch's default `text/plain` content type unless the headers set one; a byte body gets none.
 */
export function postRaw(
  server: TestServer,
  id: string,
  body: string | Uint8Array | undefined,
  headers: Record<string, string>,
): Promise<{ response: Response; body: unknown; text: string }> {
  return server.request(apiKeyPath(id), { method: 'POST', headers, ...(body === undefined ? {} : { body }) });
}

/** Asserts an error body: its type, and a message matching `message`. */
export function expectError(body: unknown, type: string, message: string | RegExp): void {
  expect(body).toMatchObject({
    type: 'error',
    error: { type, message: typeof message === 'string' ? message : expect.stringMatching(message) },
  });
}

/**
 * Asserts the 500 contract: the generic `api_error` body that reveals nothing of `secretDetail`, and a log
 * line at error level, with the request ID of the response, that carries the details.
 */
export function expectInternalError(server: TestServer, response: Response, body: unknown, secretDetail: string): void {
  expect(response.status).toBe(500);
  expect(body).toEqual({
    type: 'error',
    error: { type: 'api_error', message: 'internal server error' },
    request_id: response.headers.get('request-id'),
  });
  expect(JSON.stringify(body)).not.toContain(secretDetail);
  const requestId = response.headers.get('request-id');
  const logged = server.logLines
    .map((line) => JSON.parse(line) as { level?: number; request_id?: string; err?: { message?: string } })
    .filter((entry) => entry.request_id === requestId && entry.level === 50);
  expect(logged).toHaveLength(1);
  expect(logged[0]?.err?.message).toBe(secretDetail);
}
