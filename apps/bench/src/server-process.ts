import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How to start one HTTP server under test: a bundled JavaScript entry point run with plain Node, as in production. */
export interface ServerCommand {
  /** Entry point, relative to the repository root (built by `pnpm bench` before it runs). */
  script: string;
  env: Record<string, string>;
  /** When set, the server runs under `node --cpu-prof` and writes its profile here on exit. */
  cpuProfileDir?: string | undefined;
}

/** A running server process: its pid (for /proc), its URL, and its log file (its standard output). */
export interface ServerProcess {
  pid: number;
  url: string;
  /** Returns the log lines written since the last call and empties the file, so a long run never fills the disk. */
  takeLog(): string;
  /** Why the process has exited (code or signal, the end of its stderr), or undefined while it runs. */
  exitReason(): string | undefined;
  /** SIGTERM, then waits for the exit (a profiled server writes its profile then); SIGKILL after 20 s. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

/**
 * The Node flags of the root `start` script (`node <flags> apps/server/dist/main.js`), read from package.json so
 * that the bench runs the server exactly as operators do. The references get the same flags, so figures compare.
 */
export function startNodeFlags(repoRoot: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const match = /(?:^|&&\s*)node((?:\s+--\S+)*)\s+apps\/server\/dist\/main\.js\b/.exec(scripts.start ?? '');
  if (!match) {
    throw new Error(
      `package.json: the start script must run "node [flags] apps/server/dist/main.js": ${scripts.start}`,
    );
  }
  return match[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
}

/** The URL from the server's `{"msg":"listening","url":...}` log line, once it is there. */
function listeningUrl(log: string): string | undefined {
  for (const line of log.split('\n')) {
    if (line.includes('"listening"')) {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'listening' && entry.url) {
          return entry.url;
        }
      } catch {
        // A partly written line: read again on the next poll.
      }
    }
  }
  return undefined;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts a server as a child process with its standard output appended to `logFile`, and resolves once it logs
 * that it is listening. The log file is opened in append mode so the harness may empty it while the server writes.
 */
export async function startServer(command: ServerCommand, repoRoot: string, logFile: string): Promise<ServerProcess> {
  if (!existsSync(join(repoRoot, command.script))) {
    throw new Error(`${command.script} does not exist: build it first (pnpm bench does, or pnpm build)`);
  }
  const out = openSync(logFile, 'w');
  closeSync(out);
  const fd = openSync(logFile, 'a');
  const profiling = command.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${command.cpuProfileDir}`] : [];
  const child = spawn(process.execPath, [...startNodeFlags(repoRoot), ...profiling, command.script], {
    cwd: repoRoot,
    env: { ...process.env, ...command.env },
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });

  const deadline = Date.now() + START_TIMEOUT_MS;
  let url: string | undefined;
  while (!url) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${command.script} exited before listening (code ${child.exitCode}): ${stderr.trim()}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${command.script} did not log "listening" within ${START_TIMEOUT_MS / 1000} s`);
    }
    await sleep(50);
    url = listeningUrl(readFileSync(logFile, 'utf8'));
  }
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`${command.script} has no pid`);
  }

  return {
    pid,
    url,
    exitReason() {
      if (child.exitCode === null && child.signalCode === null) {
        return undefined;
      }
      const how = child.signalCode ? `killed by ${child.signalCode}` : `exited with code ${child.exitCode}`;
      const lastLines = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-3).join('\n');
      return `${command.script} (pid ${pid}) ${how}${stderr.trim() ? `; stderr: ${stderr.trim()}` : ''}\nlast log lines:\n${lastLines}`;
    },
    takeLog() {
      const log = readFileSync(logFile, 'utf8');
      truncateSync(logFile, 0);
      return log;
    },
    async stop() {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 20_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    },
  };
}
