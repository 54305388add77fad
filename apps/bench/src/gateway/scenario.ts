import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { type StartedServerProcess, subscribeToChanges } from '@apikeys/server/testing';
import { DEFAULT_ORGANIZATION, openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import type { LoadGenerator, LoadJob, LoadResult } from '../load.js';
import { cpuMicros, peakRssBytes, postgresCpuMicros, resetPeakRss, rssBytes } from '../procfs.js';
import { PROPAGATION_TRIALS, type PropagationResult } from '../propagation.js';
import { type Engine, KNOWN_KEY_PERMISSIONS, type SeededDatabase } from '../seed.js';
import { startServer } from '../server-process.js';
import { API_TARGET_ENV, SATISFIED_REQUIREMENT, SERVER_SCRIPT, sizeLabel } from '../targets.js';
import { GATEWAY_FORMS, type GatewayForm } from './forms.js';

/** How many distinct valid keys the load sends to the cached and plain gateways, in turn. */
export const GATEWAY_KEYS = 100;
/** How many change feed subscriptions the key server's memory per subscriber is measured with. */
export const FEED_SUBSCRIBERS = 200;
const GATEWAY_SCRIPT = 'apps/bench/dist/gateway/gateway.js';
const PROPAGATION_LIMIT_MS = 5_000;

/** How every target of a run is measured; a gateway target needs only these (`SuiteSettings` extends them). */
export interface GatewaySettings {
  repoRoot: string;
  workDir: string;
  connections: number;
  /** How many times each scenario runs on every target in turn (`runOrder`). */
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** The warm-up before a target's first scenario, while V8 optimizes the server (docs/benchmarks.md). */
  firstWarmupSeconds: number;
  onProgress(message: string): void;
}

/** A key server on one seeded database, with a gateway of each form in front of it. */
export interface GatewayTarget {
  /** `gateway-sqlite-10k`. */
  name: string;
  engine: Engine;
  keys: number;
}

/** One measured run of one form of the gateway. CPU figures are user + system time of the process, all threads. */
export interface GatewayResult extends LoadResult {
  target: string;
  form: GatewayForm;
  /**
   * `saturated`: the suite's connections, as fast as the gateway answers (p99 is mostly the wait behind the other
   * connections' requests); `one connection`: one request at a time, so that p99 is what a request itself takes.
   */
  load: GatewayLoad;
  keys: number;
  gatewayCpuMicrosPerRequest: number;
  /** The key server's CPU over the window, divided by the requests the gateway answered. */
  keyServerCpuMicrosPerRequest: number;
  /** PostgreSQL's own processes, the same way (PostgreSQL targets only). */
  databaseCpuMicrosPerRequest: number | null;
  gatewayPeakRssBytes: number;
}

/** How a gateway run is loaded. */
export type GatewayLoad = 'saturated' | 'one connection';

/** The key server's RSS before and after `subscribers` more change feed subscriptions. */
export interface FeedMemory {
  subscribers: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  bytesPerSubscriber: number;
}

/** Everything measured on one gateway target. */
export interface GatewayRun {
  target: string;
  keys: number;
  results: GatewayResult[];
  /** From a deactivation through the key server's API until the cached gateway answers 401 `INACTIVE`. */
  propagation: PropagationResult;
  feedMemory: FeedMemory;
}

/**
 * The gateway targets: the smaller store of each engine, and in full runs the larger one too (their seeding is
 * shared with the other scenarios). `only` selects `gateway-sqlite-10k/cached` and the like; a target runs all its
 * forms, since each figure is a ratio to the floor's or the plain verifier's.
 */
export function planGateways(options: {
  quick: boolean;
  sizes: readonly [number, number];
  postgres: boolean;
  only: readonly string[];
}): GatewayTarget[] {
  const sizes = options.quick ? options.sizes.slice(0, 1) : options.sizes;
  const engines: Engine[] = options.postgres ? ['sqlite', 'postgres'] : ['sqlite'];
  return engines
    .flatMap((engine) =>
      sizes.map((keys): GatewayTarget => ({ name: `gateway-${engine}-${sizeLabel(keys)}`, engine, keys })),
    )
    .filter(
      ({ name }) =>
        options.only.length === 0 ||
        GATEWAY_FORMS.some((form) => options.only.some((part) => `${name}/${form}`.includes(part))),
    );
}

/**
 * Creates the gateways' verifier key and `GATEWAY_KEYS` active API keys in the default organization, holding the
 * permissions that `SATISFIED_REQUIREMENT` asks for.
 */
async function createGatewayKeys(databaseUrl: string): Promise<{ verifierSecret: string; secrets: string[] }> {
  const { store } = await openMigratedStore(parseDatabaseUrl(databaseUrl));
  try {
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { secret: verifierSecret } = await store.createVerifierKey({ organizationId, name: 'bench gateway' });
    const createdBy = { type: 'service_account', id: 'svcacct_bench' } as const;
    const secrets = await store.transaction(async (transaction) => {
      const created: string[] = [];
      for (let index = 0; index < GATEWAY_KEYS; index++) {
        const name = `bench gateway ${index}`;
        const permissions = KNOWN_KEY_PERMISSIONS;
        created.push((await transaction.createApiKey({ organizationId, name, createdBy, permissions })).secret);
      }
      return created;
    });
    return { verifierSecret, secrets };
  } finally {
    await store.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The key server's RSS growth per change feed subscription: `FEED_SUBSCRIBERS` subscriptions opened (after a few
 * to warm the path up), each until its `subscribed` event, a second to settle on each side.
 */
async function measureFeedMemory(keyServer: StartedServerProcess, verifierSecret: string): Promise<FeedMemory> {
  const subscribe = async (count: number) => {
    const readers = await Promise.all(
      Array.from({ length: count }, () => subscribeToChanges(keyServer.baseUrl, verifierSecret)),
    );
    const refused = readers.find((reader) => reader.response.status !== 200);
    if (refused) {
      throw new Error(`a change feed subscription was answered ${refused.response.status}: ${refused.text()}`);
    }
    await Promise.all(readers.map((reader) => reader.next((event) => event.type === 'subscribed', 10_000)));
    return readers;
  };
  const warm = await subscribe(10);
  await sleep(1000);
  const rssBeforeBytes = rssBytes(keyServer.pid);
  const measured = await subscribe(FEED_SUBSCRIBERS);
  await sleep(1000);
  const rssAfterBytes = rssBytes(keyServer.pid);
  for (const reader of [...warm, ...measured]) {
    reader.close();
  }
  return {
    subscribers: FEED_SUBSCRIBERS,
    rssBeforeBytes,
    rssAfterBytes,
    bytesPerSubscriber: Math.round((rssAfterBytes - rssBeforeBytes) / FEED_SUBSCRIBERS),
  };
}

/**
 * `PROPAGATION_TRIALS` times: a key created through the key server's API, let through twice by the cached gateway
 * (the second time from its verifier's memory), deactivated through the API, then asked for at the gateway until it
 * answers 401 `INACTIVE`. The delay runs from the deactivation's response.
 */
async function measureGatewayPropagation(
  target: string,
  keyServerUrl: string,
  gatewayUrl: string,
  adminSecret: string,
): Promise<PropagationResult> {
  const headers = {
    'x-api-key': adminSecret,
    'vendor-version': LATEST_API_VERSION,
    'content-type': 'application/json',
  };
  const send = async (path: string, body: unknown) => {
    const response = await fetch(`${keyServerUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!response.ok) {
      throw new Error(`${target}: POST ${path} answered ${response.status}: ${await response.text()}`);
    }
    return (await response.json()) as { id: string; key: string };
  };
  const atGateway = async (secret: string) => {
    const response = await fetch(`${gatewayUrl}/orders`, { headers: { 'x-api-key': secret } });
    return { status: response.status, body: (await response.json()) as { error?: string } };
  };
  const delaysMs: number[] = [];
  let timedOut = 0;
  for (let trial = 0; trial < PROPAGATION_TRIALS; trial++) {
    const { id, key } = await send('/v1/organizations/api_keys', { name: `gateway propagation ${trial}` });
    for (let pass = 0; pass < 2; pass++) {
      const { status } = await atGateway(key);
      if (status !== 200) {
        throw new Error(`${target}: the gateway answered ${status} for a new key`);
      }
    }
    await send(`/v1/organizations/api_keys/${id}`, { status: 'inactive' });
    const changed = performance.now();
    for (;;) {
      const { status, body } = await atGateway(key);
      if (status === 401 && body.error === 'INACTIVE') {
        break;
      }
      if (status !== 200) {
        throw new Error(`${target}: the gateway answered ${status} ${JSON.stringify(body)} for a deactivated key`);
      }
      if (performance.now() - changed > PROPAGATION_LIMIT_MS) {
        timedOut += 1;
        break;
      }
    }
    delaysMs.push(Math.min(performance.now() - changed, PROPAGATION_LIMIT_MS));
  }
  return { target, delaysMs: delaysMs.sort((a, b) => a - b), timedOut };
}

/** One run of one form: autocannon on the gateway, reading both processes' CPU over the measured window. */
async function measureForm(
  target: GatewayTarget,
  form: GatewayForm,
  gateway: StartedServerProcess,
  keyServer: StartedServerProcess,
  job: LoadJob,
  load: LoadGenerator,
): Promise<GatewayResult> {
  const pace: GatewayLoad = job.connections === 1 ? 'one connection' : 'saturated';
  const postgres = target.engine === 'postgres';
  let gatewayCpu = 0;
  let keyServerCpu = 0;
  let databaseCpu = 0;
  let peak = 0;
  const result = await load.run(job, {
    open() {
      resetPeakRss(gateway.pid);
      gatewayCpu = -cpuMicros(gateway.pid);
      keyServerCpu = -cpuMicros(keyServer.pid);
      databaseCpu = postgres ? -postgresCpuMicros() : 0;
    },
    close() {
      gatewayCpu += cpuMicros(gateway.pid);
      keyServerCpu += cpuMicros(keyServer.pid);
      databaseCpu += postgres ? postgresCpuMicros() : 0;
      peak = peakRssBytes(gateway.pid);
    },
  });
  const requests = Math.max(result.requests, 1);
  return {
    target: target.name,
    form,
    load: pace,
    keys: target.keys,
    ...result,
    gatewayCpuMicrosPerRequest: gatewayCpu / requests,
    keyServerCpuMicrosPerRequest: keyServerCpu / requests,
    databaseCpuMicrosPerRequest: postgres ? databaseCpu / requests : null,
    gatewayPeakRssBytes: peak,
  };
}

/**
 * Runs a gateway target on its seeded database: creates the keys, starts a key server of its own (the real server's
 * bundle, as the API targets run it) and a gateway of each form, measures the key server's memory per feed
 * subscriber, runs the forms in turn `settings.rounds` times, then times the propagation to the cached gateway.
 */
export async function runGateway(
  target: GatewayTarget,
  database: SeededDatabase,
  load: LoadGenerator,
  settings: GatewaySettings,
  onResult: (result: GatewayResult) => void,
): Promise<GatewayRun> {
  const { verifierSecret, secrets } = await createGatewayKeys(database.databaseUrl);
  const floorKey = secrets[0] ?? '';
  const started: StartedServerProcess[] = [];
  const start = async (name: string, script: string, env: Record<string, string>) => {
    const logFile = join(settings.workDir, `${target.name}-${name}.log`);
    const server = await startServer({ script, env }, settings.repoRoot, logFile);
    started.push(server);
    return server;
  };
  try {
    const keyServer = await start('key-server', SERVER_SCRIPT, {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.databaseUrl,
      LOG_LEVEL: 'info',
      ...API_TARGET_ENV,
    });
    settings.onProgress(`${target.name}: measuring the key server's RSS per change feed subscriber…`);
    const feedMemory = await measureFeedMemory(keyServer, verifierSecret);
    const gateways = new Map<GatewayForm, StartedServerProcess>();
    for (const form of GATEWAY_FORMS) {
      const env: Record<string, string> =
        form === 'floor'
          ? { FLOOR_KEY: floorKey }
          : { KEY_SERVER_URL: keyServer.baseUrl, VERIFIER_KEY: verifierSecret };
      if (form === 'cached-requirement') {
        env.GATEWAY_REQUIREMENT = SATISFIED_REQUIREMENT;
      }
      const gateway = await start(form, GATEWAY_SCRIPT, { GATEWAY_FORM: form, ...env });
      gateways.set(form, gateway);
      settings.onProgress(`${target.name}: ${form} gateway listening at ${gateway.baseUrl} (pid ${gateway.pid})`);
    }
    const results: GatewayResult[] = [];
    const warmedUp = new Set<GatewayForm>();
    for (let round = 0; round < settings.rounds; round++) {
      for (const [form, gateway] of gateways) {
        const died = gateway.exitReason() ?? keyServer.exitReason();
        if (died) {
          throw new Error(`${form}: ${died}`);
        }
        const keys = form === 'floor' ? [floorKey] : secrets;
        const job: LoadJob = {
          urls: [gateway.baseUrl],
          connections: settings.connections,
          warmupSeconds: warmedUp.has(form) ? settings.warmupSeconds : settings.firstWarmupSeconds,
          // The cached gateway is measured warm: every key has been verified once before the window opens.
          warmupRequests: keys.length,
          durationSeconds: settings.durationSeconds,
          method: 'GET',
          headers: {},
          paths: ['/orders'],
          cycledHeader: { name: 'x-api-key', values: keys },
        };
        warmedUp.add(form);
        const result = await measureForm(target, form, gateway, keyServer, job, load);
        results.push(result);
        onResult(result);
      }
      for (const form of ['floor', 'cached'] as const) {
        const gateway = gateways.get(form);
        if (gateway) {
          const keys = form === 'floor' ? [floorKey] : secrets;
          const job: LoadJob = {
            urls: [gateway.baseUrl],
            connections: 1,
            warmupSeconds: settings.warmupSeconds,
            durationSeconds: settings.durationSeconds,
            method: 'GET',
            headers: {},
            paths: ['/orders'],
            cycledHeader: { name: 'x-api-key', values: keys },
          };
          const result = await measureForm(target, form, gateway, keyServer, job, load);
          results.push(result);
          onResult(result);
        }
      }
    }
    const cached = gateways.get('cached');
    if (!cached) {
      throw new Error('no cached gateway');
    }
    settings.onProgress(`${target.name}: timing ${PROPAGATION_TRIALS} deactivations until the cached gateway refuses`);
    const propagation = await measureGatewayPropagation(
      target.name,
      keyServer.baseUrl,
      cached.baseUrl,
      database.adminSecret,
    );
    return { target: target.name, keys: target.keys, results, propagation, feedMemory };
  } finally {
    // The gateways first: the cached one sends its last usage report to the key server as it stops.
    await Promise.all(started.slice(1).map((server) => server.stop()));
    await started[0]?.stop();
  }
}
