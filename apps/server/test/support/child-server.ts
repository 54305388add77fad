import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The server package's folder: the child runs there so that `--import tsx` resolves. */
const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));

/** One JSON line the child logged. */
export interface ChildLogLine {
  msg?: string;
  [field: string]: unknown;
}

/** How a child process ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The real server (`src/main.ts`) running as a child process. */
export interface ChildServer {
  child: ChildProcess;
  /** Every stdout line parsed as JSON (lines that are not JSON are kept as `{ msg: undefined, raw }`). */
  lines: ChildLogLine[];
  stderr: () => string;
  exited: Promise<ChildExit>;
  /** Resolves with the first line (already logged or still to come) that matches; rejects on exit or timeout. */
  waitForLine(predicate: (line: ChildLogLine) => boolean, timeoutMs?: number): Promise<ChildLogLine>;
}

/** The only variables the child sees besides the ones a test sets: nothing leaks in from the test runner. */
function baseEnv(): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR } = process.env;
  return { PATH, HOME, TMPDIR };
}

/** Spawns `node --import tsx src/main.ts` with exactly the given configuration variables. */
export function spawnServer(env: Record<string, string>): ChildServer {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_DIR,
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: ChildLogLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let pending = '';

  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const raw of complete.filter(Boolean)) {
      try {
        lines.push(JSON.parse(raw) as ChildLogLine);
      } catch {
        lines.push({ raw });
      }
    }
    for (const wake of waiters) {
      wake();
    }
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters) {
        wake();
      }
    });
  });

  const waitForLine = (predicate: (line: ChildLogLine) => boolean, timeoutMs = 20_000) =>
    new Promise<ChildLogLine>((resolve, reject) => {
      const check = () => {
        const found = lines.find(predicate);
        if (found) {
          finish();
          resolve(found);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          finish();
          reject(new Error(`the server exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  return { child, lines, stderr: () => stderr, exited, waitForLine };
}

/** Starts the real server on a free port and resolves with its base URL once it has logged 'listening'. */
export async function startChildServer(env: Record<string, string>): Promise<ChildServer & { baseUrl: string }> {
  const server = spawnServer({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env });
  try {
    const listening = await server.waitForLine((line) => line.msg === 'listening');
    if (typeof listening.url !== 'string') {
      throw new Error(`the 'listening' line has no url: ${JSON.stringify(listening)}`);
    }
    return { ...server, baseUrl: listening.url };
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
}

/** Kills the child if it still runs, and waits for it to exit. */
export async function stopChildServer(server: ChildServer | undefined): Promise<void> {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

/** Sends SIGTERM (a graceful shutdown) and resolves with how the child exited. */
export async function terminateChildServer(server: ChildServer): Promise<ChildExit> {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
  }
  return server.exited;
}
