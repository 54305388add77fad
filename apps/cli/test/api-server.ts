import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/** `apps/server`, found through the workspace dependency rather than a relative path into another package. */
const SERVER_ROOT = dirname(dirname(createRequire(import.meta.url).resolve('@apikeys/server')));

/** The real admin API server (`apps/server/src/main.ts`) running as a child process. */
export interface ServerProcess {
  baseUrl: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the server on a free port of 127.0.0.1 over the database `databaseUrl`, and resolves once it has logged its
 * 'listening' line. The child sees only PATH, HOME and TMPDIR of this process's environment.
 */
export function startServer(databaseUrl: string, timeoutMs = 30_000): Promise<ServerProcess> {
  const { PATH, HOME, TMPDIR } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', join('src', 'main.ts')], {
    cwd: SERVER_ROOT,
    env: { PATH, HOME, TMPDIR, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };

  return new Promise((resolve, reject) => {
    let stderr = '';
    let pending = '';
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`the server did not start: ${reason}; stderr: ${stderr}`));
    };
    const timer = setTimeout(() => fail(`no 'listening' line within ${timeoutMs} ms`), timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // Read stdout to the end, not just up to 'listening': a full pipe would block the server's request log.
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        let parsed: { msg?: unknown; url?: unknown };
        try {
          parsed = JSON.parse(line) as typeof parsed;
        } catch {
          continue;
        }
        if (parsed.msg === 'listening' && typeof parsed.url === 'string') {
          clearTimeout(timer);
          resolve({ baseUrl: parsed.url, stop });
        }
      }
    });
    child.once('exit', (code, signal) => fail(`it exited (${code ?? signal})`));
  });
}

/** A port of 127.0.0.1 on which nothing listens: one the system just handed out and that was closed again. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') {
    throw new Error('no port');
  }
  return address.port;
}
