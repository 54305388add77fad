import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * One autocannon run: at least `warmupSeconds` of load (until every connection has had a response), then
 * `durationSeconds` measured on the same connections. Requests cycle through `paths` and through `bodies`, or take
 * `bodyTemplate` with `%n` as a running number.
 */
export interface LoadJob {
  /** The servers to load; with several, the connections are spread over them round-robin. */
  urls: string[];
  connections: number;
  warmupSeconds: number;
  /** Responses the warm-up waits for at least, on top of its seconds. */
  warmupRequests?: number | undefined;
  durationSeconds: number;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  paths: string[];
  bodyTemplate?: string | undefined;
  bodies?: string[] | undefined;
  /** A header whose value cycles through `values` with the requests (API keys, say), on top of `headers`. */
  cycledHeader?: { name: string; values: string[] } | undefined;
}

/** The body of the n-th request of a job: its bodies in turn, its template with `%n` filled in, or none. */
export function requestBody(job: Pick<LoadJob, 'bodies' | 'bodyTemplate'>): (n: number) => string | undefined {
  const { bodies, bodyTemplate } = job;
  if (bodies) {
    return (n) => bodies[n % bodies.length];
  }
  return bodyTemplate === undefined ? () => undefined : (n) => bodyTemplate.replaceAll('%n', String(n));
}

/**
 * What one run measured on the client side, over the measured window: requests, latencies (milliseconds, every
 * response). Status codes, non-2xx and errors count over the whole run.
 */
export interface LoadResult {
  requests: number;
  durationSeconds: number;
  requestsPerSecond: number;
  latencyMs: { mean: number; p50: number; p99: number; max: number };
  /** Seconds until every connection had its first response; null when that took over a minute. */
  rampSeconds: number | null;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** Messages from the load generator process. */
export type WorkerMessage =
  | { kind: 'window-open' }
  | { kind: 'window-closed' }
  | { kind: 'done'; result: LoadResult }
  | { kind: 'failed'; message: string };

/** Called by the load generator as the measured window of a job opens and closes. */
export interface MeasuredWindow {
  open(): void;
  close(): void;
}

/** Runs autocannon in a child process of its own, one job at a time. */
export class LoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  /** Starts the load generator process (Node with the tsx loader: the harness runs from source). */
  static start(): LoadGenerator {
    const worker = fileURLToPath(new URL('./load-worker.ts', import.meta.url));
    const child = fork(worker, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new LoadGenerator(child);
  }

  /** Runs one job; `window.open` and `window.close` are called as the measured window opens and closes. */
  run(job: LoadJob, window: MeasuredWindow): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load generator exited (code ${code})`));
      // A window callback that throws (the server died, say) fails the job once the run has ended, so the next job
      // never meets this one's messages.
      let callbackError: unknown;
      const call = (callback: () => void) => {
        try {
          callback();
        } catch (error) {
          callbackError ??= error;
        }
      };
      const onMessage = (message: WorkerMessage) => {
        if (message.kind === 'window-open') {
          call(window.open);
          return;
        }
        if (message.kind === 'window-closed') {
          call(window.close);
          return;
        }
        this.child.off('exit', onExit);
        this.child.off('message', onMessage);
        if (callbackError !== undefined) {
          reject(callbackError);
        } else if (message.kind === 'done') {
          resolve(message.result);
        } else {
          reject(new Error(`autocannon: ${message.message}`));
        }
      };
      this.child.once('exit', onExit);
      this.child.on('message', onMessage);
      this.child.send(job);
    });
  }

  /** Ends the load generator process. */
  stop(): void {
    if (this.child.connected) {
      this.child.disconnect();
    }
  }
}
