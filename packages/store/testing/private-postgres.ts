import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian installs each PostgreSQL version's server binaries (`<version>/bin`). */
const DEBIAN_POSTGRES_DIR = '/usr/lib/postgresql';

/**
 * A PostgreSQL cluster of one test file's own, on a free port of 127.0.0.1, for tests that stop, restart or freeze
 * the database without touching the shared server. Trust authentication, user `postgres`.
 */
export interface PrivatePostgres {
  /** The URL of its `postgres` database. */
  url: string;
  port: number;
  /** Starts the cluster again after `stop()`; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the cluster as an operator would (`pg_ctl stop -m fast`): sessions are terminated, connections refused. */
  stop(): Promise<void>;
  /**
   * Freezes every process of the cluster (SIGSTOP on the postmaster, then on each of its children): the server
   * accepts TCP connections into the kernel's backlog but never answers, and never closes a socket.
   */
  freeze(): Promise<void>;
  /** Lets every process frozen by `freeze()` run again (SIGCONT). */
  thaw(): Promise<void>;
  /** Thaws, stops at once (`-m immediate`) and deletes the cluster; safe to call in any state, more than once. */
  remove(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL server installed here, or undefined if there is none. */
export function postgresBinDir(): string | undefined {
  if (existsSync(DEBIAN_POSTGRES_DIR)) {
    const newest = readdirSync(DEBIAN_POSTGRES_DIR)
      .filter((version) => existsSync(join(DEBIAN_POSTGRES_DIR, version, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))[0];
    if (newest !== undefined) {
      return join(DEBIAN_POSTGRES_DIR, newest, 'bin');
    }
  }
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return existsSync(join(bin.trim(), 'initdb')) ? bin.trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether tests can run a private cluster here. In CI they must: missing binaries are an error there, never a reason
 * to skip. Elsewhere the tests are left out with a note on stderr.
 */
export function privatePostgresAvailable(): boolean {
  if (postgresBinDir() !== undefined) {
    return true;
  }
  if (process.env.CI) {
    throw new Error('CI requires the PostgreSQL server binaries (initdb, pg_ctl) to run a private cluster');
  }
  process.stderr.write(
    'PostgreSQL server binaries (initdb, pg_ctl) not found: leaving out the private-cluster tests\n',
  );
  return false;
}

/** initdb and the server refuse to run as root: as root, they run as the `postgres` user. */
const AS_POSTGRES = process.getuid?.() === 0;

/** The command line that runs a PostgreSQL binary as the user the cluster belongs to. */
function commandOf(bin: string, program: string, args: string[]): [string, string[]] {
  const path = join(bin, program);
  return AS_POSTGRES ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
}

/** Runs a PostgreSQL binary to completion; the error names it and quotes its output. */
async function runPostgres(bin: string, program: string, args: string[]): Promise<void> {
  const [command, commandArgs] = commandOf(bin, program, args);
  try {
    await run(command, commandArgs, { timeout: 60_000 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${program} ${args.join(' ')} failed: ${stderr || stdout || (error as Error).message}`);
  }
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) {
    throw new Error('no free port');
  }
  return address.port;
}

/** The direct children of a process (the cluster's backends and helpers, for the postmaster). */
async function childrenOf(pid: number): Promise<number[]> {
  try {
    const { stdout } = await run('pgrep', ['-P', String(pid)]);
    return stdout.split('\n').filter(Boolean).map(Number);
  } catch {
    // pgrep exits 1 when there is no child.
    return [];
  }
}

/** Sends a signal to a process that may have exited already. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') {
      throw error;
    }
  }
}

/** Creates a cluster in a temporary directory (initdb), starts it on a free port, and resolves once it is ready. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (bin === undefined) {
    throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) on this machine');
  }
  const dir = mkdtempSync(join(tmpdir(), 'apikeys-postgres-'));
  const data = join(dir, 'data');
  const port = await freePort();
  let frozen: number[] = [];
  let removed = false;

  const postmasterPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const thawNow = () => {
    for (const pid of frozen) {
      signal(pid, 'SIGCONT');
    }
    frozen = [];
  };
  // The last resort when the test process exits without its teardown (a crash): never leave a frozen cluster.
  const onExit = () => {
    thawNow();
    try {
      execFileSync(...commandOf(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    } catch {
      // Not running.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const cluster: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      // Unix sockets in the cluster's own directory: the default one belongs to the shared server.
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
      await runPostgres(bin, 'pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
    },
    async stop() {
      await runPostgres(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async freeze() {
      const postmaster = postmasterPid();
      if (postmaster === undefined) {
        throw new Error('the private cluster is not running');
      }
      // The postmaster first, so that it forks no child after the children are listed.
      signal(postmaster, 'SIGSTOP');
      frozen.push(postmaster);
      for (const child of await childrenOf(postmaster)) {
        signal(child, 'SIGSTOP');
        frozen.push(child);
      }
    },
    async thaw() {
      thawNow();
    },
    async remove() {
      if (removed) {
        return;
      }
      removed = true;
      thawNow();
      process.off('exit', onExit);
      if (postmasterPid() !== undefined) {
        await runPostgres(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    if (AS_POSTGRES) {
      await run('chown', ['postgres:postgres', dir]);
    }
    await runPostgres(bin, 'initdb', [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    await cluster.start();
  } catch (error) {
    await cluster.remove();
    throw error;
  }
  return cluster;
}
