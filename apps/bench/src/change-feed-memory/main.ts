/**
 * Measures the memory a server process holds per change feed subscription: it starts the server in this process
 * (wired as `main.ts` wires it, on an in-memory SQLite store), opens `--subscriptions` subscriptions from a child
 * process (so that the clients' memory is not counted), and prints the growth of `heapUsed`, of `external` (buffers
 * outside the heap) and of RSS between none and all of them, after full GCs each time, divided by the number of
 * subscriptions. It subscribes in steps, so that the figures show whether the growth is linear.
 *
 *   pnpm --filter @apikeys/bench measure:change-feed-memory [--subscriptions 1000]
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { DEFAULT_ORGANIZATION, startTestServer } from '@apikeys/server/testing';

const { values } = parseArgs({ options: { subscriptions: { type: 'string', default: '1000' } } });
const total = Number(values.subscriptions);
const STEPS = 4;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  throw new Error('run with node --expose-gc (the script measure:change-feed-memory does)');
}

/**
 * The subscribers: a child process that opens as many subscriptions as it reads numbers on its standard input, waits
 * for each one's `subscribed` event, and writes a line once they are all open.
 */
const SUBSCRIBER_SCRIPT = `
const http = require('node:http');
const [url, key, version] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const open = () => new Promise((resolve, reject) => {
  const request = http.get(url, { agent, headers: { 'x-api-key': key, 'vendor-version': version } }, (response) => {
    if (response.statusCode !== 200) {
      reject(new Error('subscription refused: ' + response.statusCode));
      return;
    }
    response.once('data', () => resolve());
    response.resume();
  });
  request.on('error', reject);
});
let buffered = '';
process.stdin.on('data', async (chunk) => {
  buffered += chunk;
  const lines = buffered.split('\\n');
  buffered = lines.pop();
  for (const line of lines) {
    for (let n = 0; n < Number(line); n++) await open();
    process.stdout.write('open\\n');
  }
});
`;

/** Memory after full GCs, with turns of the event loop between them (sockets' finalizers run on those). */
async function settledMemory() {
  for (let i = 0; i < 4; i += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss };
}

// One more than measured: the baseline's own.
const bound = total + 1;
const server = await startTestServer({
  changeFeed: { maxSubscriptions: bound, maxPerCredential: bound, maxPerOrganization: bound },
});
const { secret } = await server.store.createVerifierKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'measure' });
const changes = `${server.baseUrl}/v1/keys/changes`;
const child = spawn(process.execPath, ['-e', SUBSCRIBER_SCRIPT, changes, secret, LATEST_API_VERSION], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const opened = (count: number) =>
  new Promise<void>((resolve) => {
    child.stdout.once('data', () => resolve());
    child.stdin.write(`${count}\n`);
  });

// One subscription opened first, so that what the first one builds once (code, caches) is in the baseline.
await opened(1);
const baseline = await settledMemory();
const steps = [];
for (let step = 1; step <= STEPS; step += 1) {
  await opened(Math.round((total * step) / STEPS) - Math.round((total * (step - 1)) / STEPS));
  const memory = await settledMemory();
  const subscriptions = server.changeFeed.size - 1;
  steps.push({
    subscriptions,
    heapBytesEach: Math.round((memory.heapUsed - baseline.heapUsed) / subscriptions),
    externalBytesEach: Math.round((memory.external - baseline.external) / subscriptions),
    rssBytesEach: Math.round((memory.rss - baseline.rss) / subscriptions),
  });
}
child.kill();
await server.close();
process.stdout.write(`${JSON.stringify({ node: process.version, steps })}\n`);
