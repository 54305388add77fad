import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { closedPort } from './http.js';
import type { ProcessExit } from './server-process.js';
import { waitForPort } from './wait-for-port.js';

/** Debian's HAProxy (`apt-get install haproxy`; `.ci/run` installs it). */
export const HAPROXY_BINARY = '/usr/sbin/haproxy';

const DEPLOY_DOC = fileURLToPath(new URL('../../../docs/deploy.md', import.meta.url));

/**
 * The HAProxy configuration of docs/deploy.md (its first ```haproxy block), so that tests run exactly what the
 * documentation ships. It expands `APIKEYS_LB_LISTEN`, `APIKEYS_LB_ADMIN_SOCKET`, `APIKEYS_REPLICA_1` and `_2`.
 */
export function deployDocHaproxyConfig(): string {
  const match = /```haproxy\n([\s\S]*?)```/.exec(readFileSync(DEPLOY_DOC, 'utf8'));
  if (!match?.[1]) {
    throw new Error(`no \`\`\`haproxy block in ${DEPLOY_DOC}`);
  }
  return match[1];
}

/** Where a private HAProxy listens and where its admin socket is: the configuration reads them from variables. */
export interface HaproxyPlaces {
  /** `127.0.0.1:<free port>`, for the frontend's `bind`. */
  listen: string;
  /** A path in a directory of its own, for `stats socket`. */
  adminSocket: string;
}

/** One row of `show stat`: a frontend, a backend or a server, by its CSV column names (`status`, `wretr`, ...). */
export type HaproxyStatRow = Record<string, string>;

/** An HAProxy of a test's own, in the foreground, with a configuration the test gives it. */
export interface PrivateHaproxy {
  /** The frontend's URL. */
  url: string;
  /** `show stat` through the admin socket, keyed by `<proxy>/<server>` (`<backend>/BACKEND` for a backend's totals). */
  stats(): Promise<Map<string, HaproxyStatRow>>;
  /**
   * Polls until HAProxy reports `status` (`UP`, `DOWN`, ...) for a server; resolves with the milliseconds it took,
   * rejects after `timeoutMs`.
   */
  waitForStatus(backend: string, server: string, status: string, timeoutMs?: number): Promise<number>;
  /** The end of what HAProxy wrote (its log and its alerts). */
  outputTail(): string;
  /** Stops it (SIGTERM, then SIGKILL) and removes its directory. */
  stop(): Promise<void>;
}

/** Sends one command to an HAProxy admin socket and resolves with its whole answer. */
function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(`${command}\n`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Parses the CSV of `show stat` (first line `# pxname,svname,...`). */
function parseStats(csv: string): Map<string, HaproxyStatRow> {
  const [header = '', ...lines] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const rows = new Map<string, HaproxyStatRow>();
  for (const line of lines) {
    const values = line.split(',');
    const row = Object.fromEntries(columns.map((column, i) => [column, values[i] ?? '']));
    rows.set(`${row.pxname}/${row.svname}`, row);
  }
  return rows;
}

/**
 * Starts `haproxy -db` (foreground) on `config`, with the environment `variables(places)` returns: HAProxy expands
 * `"${NAME}"` in its configuration, so the configuration binds and puts its admin socket where `places` says.
 * Resolves once the frontend accepts connections.
 */
export async function startPrivateHaproxy(
  config: string,
  variables: (places: HaproxyPlaces) => Record<string, string>,
): Promise<PrivateHaproxy> {
  const directory = mkdtempSync(join(tmpdir(), 'apikeys-haproxy-'));
  const port = await closedPort();
  const places: HaproxyPlaces = { listen: `127.0.0.1:${port}`, adminSocket: join(directory, 'admin.sock') };
  const configFile = join(directory, 'haproxy.cfg');
  const outputFile = join(directory, 'output.log');
  writeFileSync(configFile, config);
  const output = openSync(outputFile, 'w');
  const { PATH, HOME } = process.env;
  const child = spawn(HAPROXY_BINARY, ['-db', '-f', configFile], {
    env: { PATH, HOME, ...variables(places) },
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const outputTail = () => readFileSync(outputFile, 'utf8').slice(-4000);
  const exitReason = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `it exited (${child.exitCode ?? child.signalCode}): ${outputTail()}`
      : undefined;

  const haproxy: PrivateHaproxy = {
    url: `http://${places.listen}`,
    stats: async () => parseStats(await adminCommand(places.adminSocket, 'show stat')),
    async waitForStatus(backend, server, status, timeoutMs = 30_000) {
      const started = Date.now();
      for (;;) {
        const row = (await haproxy.stats()).get(`${backend}/${server}`);
        if (row?.status === status) {
          return Date.now() - started;
        }
        if (Date.now() - started > timeoutMs) {
          throw new Error(`haproxy reports ${backend}/${server} ${row?.status ?? 'missing'}, not ${status}`);
        }
        await sleep(50);
      }
    },
    outputTail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
  try {
    await Promise.race([
      waitForPort('haproxy', port, 10_000, exitReason),
      spawnError.then((error) => Promise.reject(new Error(`cannot start ${HAPROXY_BINARY}: ${error.message}`))),
    ]);
  } catch (error) {
    await haproxy.stop();
    throw error;
  }
  return haproxy;
}
