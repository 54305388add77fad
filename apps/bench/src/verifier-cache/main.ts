/**
 * Measures the memory a caching verifier (`createVerifierClient({ cache })` of @apikeys/client) holds per remembered
 * verdict: it fills the cache with `--entries` distinct VALID verdicts through the public API, with an in-process
 * fetch that answers `verifyApiKey` and keeps a change feed live (no sockets, no server), and prints the growth of
 * `process.memoryUsage().heapUsed` between an empty and a full cache, after a full GC each time, divided by the
 * entries. The verdicts are parsed from JSON as the client parses the server's, one object each.
 *
 *   pnpm --filter @apikeys/bench measure:verifier-cache [--entries 100000]
 */
import { parseArgs } from 'node:util';
import { createVerifierClient } from '@apikeys/client';

const { values } = parseArgs({ options: { entries: { type: 'string', default: '100000' } } });
const entries = Number(values.entries);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  throw new Error('run with node --expose-gc (the script measure:verifier-cache does)');
}

/** A key ID of the spec's shape, made of `n`. */
const keyId = (n: number) => `apikey_${String(n).padStart(24, '0')}`;

/** A VALID verdict as the server writes it, for the secret numbered `n`. */
function verdictJson(n: number): string {
  return JSON.stringify({
    valid: true,
    code: 'VALID',
    key: {
      id: keyId(n),
      type: 'api_key',
      organization_id: 'org_01HZX3Q8K2M4N6P8R0T2V4W6',
      name: `customer ${n}`,
      scope: { type: 'workspace', workspace_id: 'wrkspc_01HZX3Q8K2M4N6P8R0T2' },
      principal: null,
      expires_at: null,
      status: 'active',
    },
  });
}

/** A change feed that says `subscribed` and then stays open (heartbeats every second keep it live). */
function feedStream(): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(
        encoder.encode('event: subscribed\ndata: {"type":"subscribed","heartbeat_interval_ms":1000}\n\n'),
      );
      timer = setInterval(
        () => controller.enqueue(encoder.encode('event: heartbeat\ndata: {"type":"heartbeat"}\n\n')),
        1000,
      );
    },
    cancel() {
      clearInterval(timer);
    },
  });
}

async function inProcessFetch(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (pathname === '/v1/keys/changes') {
    return new Response(feedStream(), { headers: { 'content-type': 'text/event-stream' } });
  }
  if (pathname === '/v1/keys/verify') {
    const { key } = (await request.json()) as { key: string };
    return new Response(verdictJson(Number(key.slice('sk-api-'.length))), {
      headers: { 'content-type': 'application/json' },
    });
  }
  return new Response('{"received":0}', { headers: { 'content-type': 'application/json' } });
}

const verifier = createVerifierClient({
  baseUrl: 'http://in-process',
  apiKey: 'sk-vfy-measure',
  fetch: inProcessFetch,
  cache: { maxEntries: entries },
});
while (verifier.cache?.live !== true) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const secret = (n: number) => `sk-api-${String(n).padStart(43, '0')}`;
/** heapUsed after full GCs, with turns of the event loop between them (fetch's finalizers run on those). */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

await verifier.keys.verify(secret(entries)); // loads node:crypto and warms every path up
const empty = await settledHeap();
for (let n = 0; n < entries; n += 1) {
  await verifier.keys.verify(secret(n));
}
const size = verifier.cache?.size ?? 0;
const full = await settledHeap();
await verifier.close(); // which forgets every verdict
const closed = await settledHeap();
process.stdout.write(
  `${JSON.stringify({
    entries: size,
    heapGrowthBytes: full - empty,
    bytesPerEntry: Math.round((full - empty) / size),
    freedOnCloseBytesPerEntry: Math.round((full - closed) / size),
    node: process.version,
  })}\n`,
);
