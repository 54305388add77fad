import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  DEFAULT_ORGANIZATION,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { randomBase62, SECRET_PREFIX } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretRegistry } from '../fuzz/secrets.js';

// The spec's promise (Input): an error message repeats a client's value only when it has the shape of its field, so a
// secret sent in the wrong place never comes back. Every kind of secret, in each form the service has issued, goes
// into every place of a request that an answer could repeat; no response body, response header or log line may hold
// any of it.

const AUDIT_EVENTS_PATH = '/v1/organizations/audit_events';

/** A request that carries a secret somewhere. */
interface Sent {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A place of a request where a client's value goes, with the request that puts `secret` there. */
interface Place {
  place: string;
  request: (secret: string) => Sent;
}

const json = (value: unknown) => JSON.stringify(value);
const query = (secret: string) => encodeURIComponent(secret);

const PLACES: Place[] = [
  // Paths.
  { place: 'a path of no route', request: (s) => ({ path: `/v1/${s}` }) },
  { place: 'a path with a trailing slash', request: (s) => ({ path: `${apiKeyPath(s)}/` }) },
  { place: 'a path whose method is not allowed', request: (s) => ({ path: apiKeyPath(s), method: 'DELETE' }) },
  { place: 'api_key_id of getApiKey', request: (s) => ({ path: apiKeyPath(s) }) },
  { place: 'api_key_id of updateApiKey', request: (s) => ({ path: apiKeyPath(s), body: json({ name: 'x' }) }) },
  { place: 'api_key_id of rotateApiKey', request: (s) => ({ path: `${apiKeyPath(s)}/rotate`, body: '{}' }) },
  { place: 'audit_event_id of getAuditEvent', request: (s) => ({ path: `${AUDIT_EVENTS_PATH}/${s}` }) },
  { place: 'a file of the admin console', request: (s) => ({ path: `/console/assets/${s}` }) },
  { place: 'a file of the admin console, inside a name', request: (s) => ({ path: `/console/assets/x${s}.js` }) },
  // Query parameters.
  { place: 'a query parameter name', request: (s) => ({ path: `${API_KEYS_PATH}?${query(s)}=1` }) },
  { place: 'a repeated query parameter name', request: (s) => ({ path: `${API_KEYS_PATH}?${query(s)}&${query(s)}` }) },
  ...['after_id', 'before_id', 'limit', 'status', 'permission', 'workspace_id', 'created_by_user_id'].map((name) => ({
    place: `${name} of listApiKeys`,
    request: (s: string) => ({ path: `${API_KEYS_PATH}?${name}=${query(s)}` }),
  })),
  ...['after_id', 'target_id', 'actor_id', 'type', 'occurred_after'].map((name) => ({
    place: `${name} of listAuditEvents`,
    request: (s: string) => ({ path: `${AUDIT_EVENTS_PATH}?${name}=${query(s)}` }),
  })),
  // Headers.
  { place: 'vendor-version', request: (s) => ({ path: API_KEYS_PATH, headers: { 'vendor-version': s } }) },
  {
    place: 'anthropic-version',
    request: (s) => ({ path: API_KEYS_PATH, headers: { 'vendor-version': '', 'anthropic-version': s } }),
  },
  { place: 'x-api-key', request: (s) => ({ path: API_KEYS_PATH, headers: { 'x-api-key': s } }) },
  {
    place: 'authorization of another scheme',
    request: (s) => ({ path: API_KEYS_PATH, headers: { 'x-api-key': '', authorization: `Basic ${s}` } }),
  },
  {
    place: 'the charset of content-type',
    request: (s) => ({
      path: apiKeyPath('apikey_x'),
      headers: { 'content-type': `application/json; charset=${s}` },
      body: json({ name: 'x' }),
    }),
  },
  // Bodies.
  { place: 'an unknown field name', request: (s) => ({ path: apiKeyPath('apikey_x'), body: json({ [s]: 1 }) }) },
  {
    place: 'an unknown field name, nested',
    request: (s) => ({ path: API_KEYS_PATH, body: json({ name: 'x', principal: { type: 'user_actor', [s]: 1 } }) }),
  },
  {
    place: 'a field name holding an unpaired surrogate',
    request: (s) => ({ path: apiKeyPath('apikey_x'), body: `{"metadata": {"${s}\\ud800": 1}}` }),
  },
  { place: 'malformed JSON', request: (s) => ({ path: apiKeyPath('apikey_x'), body: `{"name": "${s}` }) },
  { place: 'a name too long', request: (s) => ({ path: API_KEYS_PATH, body: json({ name: s.repeat(100) }) }) },
  { place: 'expires_at', request: (s) => ({ path: API_KEYS_PATH, body: json({ name: 'x', expires_at: s }) }) },
  { place: 'workspace_id', request: (s) => ({ path: API_KEYS_PATH, body: json({ name: 'x', workspace_id: s }) }) },
  {
    place: 'permissions of createApiKey',
    request: (s) => ({ path: API_KEYS_PATH, body: json({ name: 'x', permissions: [s] }) }),
  },
  {
    place: 'a metadata key of a number that would not come back (createApiKey)',
    request: (s) => ({ path: API_KEYS_PATH, body: `{"name": "x", "metadata": {"${s}": 1e400}}` }),
  },
  {
    place: 'a metadata key of a number that would not come back (updateApiKey)',
    request: (s) => ({ path: apiKeyPath('apikey_x'), body: `{"metadata": {"a": {"${s}": 9007199254740993}}}` }),
  },
  {
    place: 'the permission requirement of verifyApiKey',
    request: (s) => ({ path: '/v1/keys/verify', body: json({ key: s, permissions: s }) }),
  },
  {
    place: 'the permission requirement of verifyApiKey, inside a longer word',
    request: (s) => ({ path: '/v1/keys/verify', body: json({ key: s, permissions: `documents.read AND x${s}.read` }) }),
  },
  {
    place: 'api_key_id of reportKeyUsage',
    request: (s) => ({
      path: '/v1/keys/usage',
      body: json({ uses: [{ api_key_id: s, used_at: '2026-11-27T12:00:41.000000Z' }] }),
    }),
  },
];

describe('a secret sent anywhere in a request never comes back', () => {
  let server: TestServer;
  let consoleDirectory: string;
  const secrets = new SecretRegistry();
  const kinds: { name: string; secret: string }[] = [];

  beforeAll(async () => {
    // A console build of one page, so that its missing files are answered as in production.
    consoleDirectory = mkdtempSync(join(tmpdir(), 'console-'));
    writeFileSync(join(consoleDirectory, 'index.html'), '<!doctype html><title>console</title>');
    server = await startTestServer({ consoleDirectory });
    const organizationId = DEFAULT_ORGANIZATION.id;
    const issued = {
      admin: server.adminKey,
      apiKey: (
        await server.store.createApiKey({
          organizationId,
          name: 'echo',
          workspaceId: 'wrkspc_echo',
          createdBy: { id: 'user_echo', type: 'user' },
        })
      ).secret,
      verifier: (await server.store.createVerifierKey({ organizationId, name: 'echo' })).secret,
    };
    for (const [kind, prefix] of Object.entries(SECRET_PREFIX) as [keyof typeof SECRET_PREFIX, string][]) {
      kinds.push({ name: `${kind} key (checksummed)`, secret: issued[kind] });
      kinds.push({ name: `${kind} key (legacy, no checksum)`, secret: prefix + randomBase62(43) });
    }
    for (const { name, secret } of kinds) {
      secrets.add(secret, `<${name}>`);
    }
  });
  afterAll(async () => {
    await server.close();
    rmSync(consoleDirectory, { recursive: true, force: true });
  });

  it.each(PLACES)('in $place', async ({ request }) => {
    for (const { name, secret } of kinds) {
      const { path, method, headers = {}, body } = request(secret);
      const { response, text } = await server.request(path, {
        method: method ?? (body === undefined ? 'GET' : 'POST'),
        headers: {
          'x-api-key': server.adminKey,
          'vendor-version': LATEST_API_VERSION,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body }),
      });
      const answer = [...response.headers].map(([header, value]) => `${header}: ${value}`).join('\n');

      expect(response.status, `${name}: ${secrets.redact(text)}`).toBeLessThan(500);
      expect(secrets.find(`${answer}\n\n${text}`), `${name}: ${secrets.redact(`${answer}\n\n${text}`)}`).toBe(
        undefined,
      );
    }
  });

  it('nor reaches the log', () => {
    const log = server.logLines.join('\n');

    expect(log).toContain('"msg":"request"');
    expect(secrets.find(log), secrets.redact(log)).toBe(undefined);
  });
});
