import { type ChildProcess, spawn } from 'node:child_process';
import { closedPort } from './http.js';
import { waitForPort } from './wait-for-port.js';

/** A redis-server of a test's own on a free port, keeping nothing on disk, that the test may stop and start. */
export interface PrivateRedis {
  url: string;
  port: number;
  /** Starts it (again, on the same port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and waits for the process to exit. */
  stop(): Promise<void>;
  /** Freezes it (SIGSTOP): it keeps its connections but answers nothing, as a stalled server does. */
  freeze(): void;
  /** Lets a frozen server go on (SIGCONT). */
  thaw(): void;
}

/** Starts a private redis-server (Debian's `redis-server` must be installed; `.ci/run` installs it). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await closedPort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
      child = spawn('redis-server', args, { stdio: 'ignore' });
      const failed = new Promise<never>((_, reject) => {
        child?.once('error', (error) => reject(new Error(`cannot start redis-server: ${error.message}`)));
      });
      await Promise.race([waitForPort('redis-server', port, 10_000), failed]);
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running && running.exitCode === null && running.signalCode === null) {
        const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
        running.kill('SIGCONT');
        running.kill('SIGTERM');
        await exited;
      }
    },
  };
  await redis.start();
  return redis;
}
