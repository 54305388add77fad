import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, truncateSync } from 'node:fs';
import { SERVER_BUNDLE, SERVER_DIR } from './server-bundle.js';

/** One JSON line the server logged (a line that is not JSON is kept as `{ raw }`). */
export interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

/** How a child process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What to start, how, and where its standard output goes. */
export interface ServerProcessOptions {
  /**
   * Variables on top of `PORT=0`, `HOST=127.0.0.1`, `LOG_LEVEL=info` and `RATE_LIMIT_PER_MINUTE=0`: like the
   * in-process test server, a test server is not rate limited unless the test sets a limit.
   */
  env?: Record<string, string>;
  /**
   * What runs: the server's production bundle (the default: `buildServerBundle()` makes it, in the suites' global
   * setup), or another JavaScript file run with plain Node and `nodeFlags`, relative to `cwd`.
   */
  script?: { path: string; cwd: string; nodeFlags?: readonly string[] };
  /**
   * Whether the child sees this process's whole environment. By default it sees only PATH, HOME and TMPDIR, so that
   * nothing leaks in from the test runner.
   */
  inheritEnv?: boolean;
  /**
   * Appends standard output to this file instead of keeping its lines in memory: for servers under load, whose log
   * would fill the memory. `lines` then stays empty; `takeLog()` reads the file.
   */
  logFile?: string;
}

/** A server running as a child process. */
export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  /** Every stdout line so far, parsed as JSON (empty with `logFile`). */
  lines: LogLine[];
  stderr(): string;
  exited: Promise<ProcessExit>;
  /** Resolves with the first line (already logged or still to come) that matches; rejects on exit or timeout. */
  waitForLine(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** With `logFile`: the log written since the last call, after which the file is emptied. */
  takeLog(): string;
  /** Why the process has exited (code or signal, the end of its stderr), or undefined while it runs. */
  exitReason(): string | undefined;
  /** SIGTERM (a graceful shutdown), then SIGKILL if it has not exited after `graceMs`; resolves with how it exited. */
  stop(graceMs?: number): Promise<ProcessExit>;
  /** SIGKILL, if it still runs; resolves with how it exited. */
  kill(): Promise<ProcessExit>;
}

/** A started server: a ready process, with the URL it logged in its `listening` line. */
export interface StartedServerProcess extends ServerProcess {
  baseUrl: string;
}

function parseLine(raw: string): LogLine {
  try {
    return JSON.parse(raw) as LogLine;
  } catch {
    return { raw };
  }
}

/** Starts the server process without waiting for it: for tests of a server that must refuse to start. */
export function spawnServerProcess(options: ServerProcessOptions = {}): ServerProcess {
  const { PATH, HOME, TMPDIR } = process.env;
  const baseEnv = options.inheritEnv ? process.env : { PATH, HOME, TMPDIR };
  const defaults = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0' };
  const env = { ...baseEnv, ...defaults, ...options.env };
  const [args, cwd] = options.script
    ? [[...(options.script.nodeFlags ?? []), options.script.path], options.script.cwd]
    : [[SERVER_BUNDLE], SERVER_DIR];
  let stdout: 'pipe' | number = 'pipe';
  if (options.logFile) {
    closeSync(openSync(options.logFile, 'w'));
    // Append mode, so that `takeLog()` may empty the file while the server writes.
    stdout = openSync(options.logFile, 'a');
  }
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') {
    closeSync(stdout);
  }
  if (child.pid === undefined) {
    throw new Error(`the server process did not start (${args.join(' ')})`);
  }

  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) {
      waiter();
    }
  };
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    lines.push(...complete.filter(Boolean).map(parseLine));
    wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    // Only the end matters for a report, and a long run must not grow it without bound.
    stderr = (stderr + chunk).slice(-16_000);
  });
  // 'close' rather than 'exit': by then standard output is read to its end, so every line is in `lines`.
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('close', (code, signal) => {
      resolve({ code, signal });
      wake();
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const logLines = () =>
    options.logFile ? readFileSync(options.logFile, 'utf8').split('\n').filter(Boolean).map(parseLine) : lines;

  const waitForLine = (predicate: (line: LogLine) => boolean, timeoutMs = 30_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const found = logLines().find(predicate);
        if (found) {
          finish();
          resolve(found);
        } else if (!running()) {
          finish();
          reject(new Error(`the server exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr}`));
        }
      };
      // A log file gives no event when a line arrives: it is read again every 50 ms.
      const poll = options.logFile ? setInterval(check, 50) : undefined;
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        clearInterval(poll);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const kill = async () => {
    if (running()) {
      child.kill('SIGKILL');
    }
    return exited;
  };
  return {
    child,
    pid: child.pid,
    lines,
    stderr: () => stderr,
    exited,
    waitForLine,
    takeLog() {
      if (!options.logFile) {
        throw new Error('takeLog() needs a logFile');
      }
      const log = readFileSync(options.logFile, 'utf8');
      truncateSync(options.logFile, 0);
      return log;
    },
    exitReason() {
      if (running()) {
        return undefined;
      }
      const how = child.signalCode ? `killed by ${child.signalCode}` : `exited with code ${child.exitCode}`;
      const last = options.logFile
        ? readFileSync(options.logFile, 'utf8').trimEnd().split('\n').slice(-3).join('\n')
        : lines
            .slice(-3)
            .map((line) => JSON.stringify(line))
            .join('\n');
      const tail = stderr.trim() ? `; stderr: ${stderr.trim()}` : '';
      return `server process ${child.pid} ${how}${tail}\nlast log lines:\n${last}`;
    },
    async stop(graceMs = 20_000) {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
    kill,
  };
}

/** Waits for the `listening` line of a server process (logged once its port is bound) and returns its URL. */
export async function listeningUrl(server: ServerProcess, timeoutMs = 60_000): Promise<string> {
  const listening = await server.waitForLine((line) => line.msg === 'listening', timeoutMs);
  if (typeof listening.url !== 'string') {
    throw new Error(`the 'listening' line has no url: ${JSON.stringify(listening)}`);
  }
  return listening.url;
}

/**
 * Starts the server as a child process on a free port of 127.0.0.1 and resolves once it has logged its `ready` line
 * (its operations are warm); kills it if it does not within `timeoutMs`.
 */
export async function startServerProcess(
  options: ServerProcessOptions = {},
  timeoutMs = 60_000,
): Promise<StartedServerProcess> {
  const server = spawnServerProcess(options);
  try {
    const startedAt = Date.now();
    const baseUrl = await listeningUrl(server, timeoutMs);
    await server.waitForLine((line) => line.msg === 'ready', Math.max(0, timeoutMs - (Date.now() - startedAt)));
    return { ...server, baseUrl };
  } catch (error) {
    await server.kill();
    throw error;
  }
}
