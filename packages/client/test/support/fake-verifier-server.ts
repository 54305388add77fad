import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyUse, KeyVerification } from '../../src/index.js';

/**
 * A stand-in for the three endpoints a caching verifier calls, for tests of the cache's logic: `verifyApiKey`
 * answered from a table of secrets, `streamKeyChanges` as Server-Sent Events the test writes, and `reportKeyUsage`
 * recorded. Every request is counted, so that a test can tell what reached the "server".
 */
export interface FakeVerifierServer {
  baseUrl: string;
  /** The secrets `verifyApiKey` knows; any other is `NOT_FOUND`. */
  verdicts: Map<string, KeyVerification>;
  /** The secret of every `verifyApiKey` request received, in order. */
  verifications: string[];
  /** The headers of every `streamKeyChanges` request received, in order. */
  subscriptions: IncomingMessage['headers'][];
  /** `performance.now()` at each `streamKeyChanges` request. */
  subscriptionTimes: number[];
  /** The streams open now. */
  readonly openStreams: number;
  /** The body of every `reportKeyUsage` request received, in order (failed ones too). */
  usageReports: KeyUse[][];
  /** When set, a `verifyApiKey` answer waits for this promise first. */
  holdVerifications: Promise<void> | undefined;
  /** How the next subscriptions are answered: `subscribe` (the default), a refusal, or a stream that stays silent. */
  nextSubscriptions: SubscriptionAction[];
  /** How the next usage reports are answered; 200 when empty. */
  nextUsageStatuses: number[];
  /** Whether open streams get a heartbeat every interval; turn off to make the feed go silent. */
  heartbeats: boolean;
  /**
   * When set, each new subscription announces this lifetime in `subscribed` (`ends_in_ms`) and, unless
   * `keepPastLifetime`, is ended by the fake once it has passed, as the server ends it.
   */
  lifetimeMs: number | undefined;
  keepPastLifetime: boolean;
  /** The most streams open at once so far. */
  readonly mostOpenStreams: number;
  /** Ends the stream that was opened first among those open now. */
  endOldestStream(): void;
  /** Writes one event to every open stream. */
  send(event: { type: string; [field: string]: unknown }): void;
  /** Writes text as it is to every open stream. */
  sendRaw(text: string): void;
  /** Ends every open stream, as a server shutting down does. */
  endStreams(): void;
  /** Stops the server, ending every stream. */
  close(): Promise<void>;
}

/** How the fake answers a subscription. */
export type SubscriptionAction = 'subscribe' | 'silent' | { status: number; retryAfter?: string };

/** A key as `verifyApiKey` names it. */
export function verifiedKey(id: string, overrides: { expires_at?: string | null; status?: string } = {}) {
  return {
    id,
    type: 'api_key',
    organization_id: 'org_01HZX3Q8K2M4N6P8R0T2V4W6',
    name: 'customer',
    scope: { type: 'organization' },
    principal: null,
    expires_at: null,
    status: 'active',
    ...overrides,
  } as NonNullable<KeyVerification['key']>;
}

/** A `VALID` verdict for the key `id`. */
export function valid(id: string, expiresAt: string | null = null): KeyVerification {
  return { valid: true, code: 'VALID', key: verifiedKey(id, { expires_at: expiresAt }) };
}

/** A key ID of the spec's shape, made of `n`. */
export function keyId(n: number): string {
  return `apikey_${String(n).padStart(24, '0')}`;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', ...headers });
  response.end(JSON.stringify(body));
}

/** Starts the fake on a free port; it announces `heartbeatIntervalMs` in `subscribed`. */
export async function startFakeVerifierServer({ heartbeatIntervalMs = 100 } = {}): Promise<FakeVerifierServer> {
  const streams = new Set<ServerResponse>();
  let mostOpenStreams = 0;
  const write = (response: ServerResponse, event: { type: string }) =>
    response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

  const fake: FakeVerifierServer = {
    baseUrl: '',
    verdicts: new Map(),
    verifications: [],
    subscriptions: [],
    subscriptionTimes: [],
    get openStreams() {
      return streams.size;
    },
    get mostOpenStreams() {
      return mostOpenStreams;
    },
    lifetimeMs: undefined,
    keepPastLifetime: false,
    endOldestStream() {
      const [oldest] = streams;
      oldest?.end();
      if (oldest) {
        streams.delete(oldest);
      }
    },
    usageReports: [],
    holdVerifications: undefined,
    nextSubscriptions: [],
    nextUsageStatuses: [],
    heartbeats: true,
    send(event) {
      for (const response of streams) {
        write(response, event);
      }
    },
    sendRaw(text) {
      for (const response of streams) {
        response.write(text);
      }
    },
    endStreams() {
      for (const response of streams) {
        response.end();
      }
      streams.clear();
    },
    close: async () => {},
  };

  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method === 'POST' && request.url === '/v1/keys/verify') {
      const { key } = JSON.parse(body) as { key: string };
      fake.verifications.push(key);
      await fake.holdVerifications;
      sendJson(response, 200, fake.verdicts.get(key) ?? { valid: false, code: 'NOT_FOUND', key: null });
    } else if (request.method === 'GET' && request.url === '/v1/keys/changes') {
      fake.subscriptions.push(request.headers);
      fake.subscriptionTimes.push(performance.now());
      const action = fake.nextSubscriptions.shift() ?? 'subscribe';
      if (typeof action === 'object') {
        const headers: Record<string, string> = action.retryAfter ? { 'retry-after': action.retryAfter } : {};
        const error = { type: 'service_unavailable_error', message: 'busy' };
        sendJson(response, action.status, { type: 'error', error, request_id: 'req_fake' }, headers);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      streams.add(response);
      mostOpenStreams = Math.max(mostOpenStreams, streams.size);
      response.on('close', () => streams.delete(response));
      if (action === 'subscribe') {
        const subscribed: { type: string; heartbeat_interval_ms: number; ends_in_ms?: number } = {
          type: 'subscribed',
          heartbeat_interval_ms: heartbeatIntervalMs,
        };
        if (fake.lifetimeMs !== undefined) {
          subscribed.ends_in_ms = fake.lifetimeMs;
        }
        write(response, subscribed);
        if (fake.lifetimeMs !== undefined && !fake.keepPastLifetime) {
          const timer = setTimeout(() => {
            response.end();
            streams.delete(response);
          }, fake.lifetimeMs);
          response.on('close', () => clearTimeout(timer));
        }
      }
    } else if (request.method === 'POST' && request.url === '/v1/keys/usage') {
      const { uses } = JSON.parse(body) as { uses: KeyUse[] };
      fake.usageReports.push(uses);
      const status = fake.nextUsageStatuses.shift() ?? 200;
      sendJson(response, status, status === 200 ? { received: uses.length } : { type: 'error' });
    } else {
      sendJson(response, 404, { type: 'error' });
    }
  });
  const heartbeat = setInterval(() => {
    if (fake.heartbeats) {
      fake.send({ type: 'heartbeat' });
    }
  }, heartbeatIntervalMs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      clearInterval(heartbeat);
      fake.endStreams();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** Resolves once `condition` holds (checked every 5 ms), or rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 5_000, what = 'the condition'): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Waits `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
