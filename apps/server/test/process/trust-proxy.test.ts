import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEYS_PATH,
  authHeaders,
  deployDocHaproxyConfig,
  type PreparedDatabase,
  type PrivateHaproxy,
  prepareDatabase,
  type StartedServerProcess,
  startPrivateHaproxy,
  startServerProcess,
} from '../../testing/index.js';

/** HAProxy connects to the replica from this address, the only one the replica trusts (TRUST_PROXY). */
const PROXY_ADDRESS = '127.0.0.10';
const AUTH_FAILURES_PER_MINUTE = 3;
const GUESS = 'sk-adm-guessguessguessguessguessguessguessgue';
const AUDIT_EVENTS_PATH = '/v1/organizations/audit_events';

/** What came back: the status and the body, parsed when it is JSON. */
interface Reply {
  status: number;
  body: unknown;
}

/**
 * Sends a request on a connection of its own from `localAddress` (any 127.0.0.0/8 address reaches the loopback
 * interface on Linux), so that each simulated client has an address of its own.
 */
function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: string },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { localAddress, agent: false, method: init.method ?? 'GET', headers: init.headers });
    outgoing.on('error', reject);
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    outgoing.end(init.body);
  });
}

/** The statuses of `count` list requests, one after another, with `adminKey` and `extra` headers. */
async function listStatuses(
  localAddress: string,
  baseUrl: string,
  adminKey: string,
  count: number,
  extra: Record<string, string> = {},
): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await requestFrom(localAddress, `${baseUrl}${API_KEYS_PATH}?limit=1`, {
      headers: authHeaders(adminKey, extra),
    });
    statuses.push(reply.status);
  }
  return statuses;
}

const failuresThen429 = (extra: number) => [...Array(AUTH_FAILURES_PER_MINUTE).fill(401), ...Array(extra).fill(429)];

describe('client addresses behind HAProxy (docs/deploy.md) with TRUST_PROXY set to its address', () => {
  let directory: string;
  let prepared: PreparedDatabase;
  let replica: StartedServerProcess | undefined;
  let haproxy: PrivateHaproxy | undefined;
  const proxied = () => (haproxy as PrivateHaproxy).url;
  const direct = () => (replica as StartedServerProcess).baseUrl;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-trust-proxy-'));
    prepared = await prepareDatabase(`file:${join(directory, 'api-keys.sqlite')}`);
    replica = await startServerProcess({
      env: {
        DATABASE_URL: prepared.url,
        AUTH_FAILURE_LIMIT_PER_MINUTE: String(AUTH_FAILURES_PER_MINUTE),
        TRUST_PROXY: PROXY_ADDRESS,
      },
    });
    // The documented configuration, connecting to the replica from an address of its own rather than 127.0.0.1.
    const documented = deployDocHaproxyConfig();
    const backend = /^backend apikeys_replicas\n/m;
    expect(documented).toMatch(backend);
    const config = documented.replace(backend, (line) => `${line}    source ${PROXY_ADDRESS}\n`);
    const { host } = new URL(replica.baseUrl);
    haproxy = await startPrivateHaproxy(config, ({ listen, adminSocket }) => ({
      APIKEYS_LB_LISTEN: listen,
      APIKEYS_LB_ADMIN_SOCKET: adminSocket,
      APIKEYS_REPLICA_1: host,
      APIKEYS_REPLICA_2: host,
    }));
    await haproxy.waitForStatus('apikeys_replicas', 'replica1', 'UP');
    await haproxy.waitForStatus('apikeys_replicas', 'replica2', 'UP');
  });

  afterAll(async () => {
    await replica?.kill();
    await haproxy?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it("counts failed authentications per client address: one guesser's never count against another client", async () => {
    const guesser = await listStatuses('127.0.0.2', proxied(), GUESS, AUTH_FAILURES_PER_MINUTE + 2);
    const other = await listStatuses('127.0.0.3', proxied(), GUESS, AUTH_FAILURES_PER_MINUTE);
    const otherAuthenticates = await listStatuses('127.0.0.3', proxied(), prepared.adminKey, 1);

    expect(guesser).toEqual(failuresThen429(2));
    expect(other).toEqual(Array(AUTH_FAILURES_PER_MINUTE).fill(401));
    expect(otherAuthenticates).toEqual([200]);
  });

  it('ignores an X-Forwarded-For a client sends through the proxy: the entry HAProxy appends is counted', async () => {
    const forged = { 'x-forwarded-for': '127.0.0.5' };
    const guesser = await listStatuses('127.0.0.4', proxied(), GUESS, AUTH_FAILURES_PER_MINUTE + 1, forged);
    const forgedAddress = await listStatuses('127.0.0.5', proxied(), GUESS, 1);

    expect(guesser).toEqual(failuresThen429(1));
    expect(forgedAddress).toEqual([401]);
  });

  it('ignores X-Forwarded-For sent directly by a client that is not a trusted proxy: its own address counts', async () => {
    const forged = { 'x-forwarded-for': '127.0.0.7' };
    const guesser = await listStatuses('127.0.0.6', direct(), GUESS, AUTH_FAILURES_PER_MINUTE + 1, forged);
    const forgedAddress = await listStatuses('127.0.0.7', direct(), GUESS, 1);

    expect(guesser).toEqual(failuresThen429(1));
    expect(forgedAddress).toEqual([401]);
  });

  it("records the client's address behind the proxy in the audit trail, as its failures are counted", async () => {
    const headers = authHeaders(prepared.adminKey, { 'vendor-version': LATEST_API_VERSION });
    const created = await requestFrom('127.0.0.8', `${proxied()}${API_KEYS_PATH}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-forwarded-for': '127.0.0.9' },
      body: JSON.stringify({ name: 'created behind the proxy' }),
    });
    expect(created.status).toBe(200);
    const keyId = (created.body as { id: string }).id;
    const events = await requestFrom('127.0.0.8', `${proxied()}${AUDIT_EVENTS_PATH}?target_id=${keyId}`, { headers });

    expect(events.status).toBe(200);
    expect((events.body as { data: { client: unknown }[] }).data.map((event) => event.client)).toEqual([
      { ip_address: '127.0.0.8', user_agent: null },
    ]);
  });
});
