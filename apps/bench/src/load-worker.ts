// The load generator's own process: it receives jobs from load.ts over IPC and runs autocannon in-process, so the
// harness, the server and the load generator never share a CPU-bound event loop.
import autocannon from 'autocannon';
import { type LoadJob, type LoadResult, requestBody, type WorkerMessage } from './load.js';

/** How long all connections may take to get their first response before the window opens anyway. */
const MAX_RAMP_MS = 60_000;

const send = (message: WorkerMessage) => process.send?.(message);

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: Float64Array, p: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/**
 * One autocannon run: warm-up, then the measured window, on the same connections. A saturated Node server accepts
 * new connections slowly (the 50th may wait a second or more for its first response), so the window opens only
 * once the warm-up has passed AND every connection has had a response, and then lasts `durationSeconds`. Only
 * responses inside the window count; the harness is told when the window opens and closes to read the server's CPU.
 */
function runJob(job: LoadJob): Promise<LoadResult> {
  const started = performance.now();
  let sent = 0;
  let warmedUp = job.warmupSeconds === 0;
  let rampSeconds: number | null = null;
  let windowStart = 0;
  let windowEnd = 0;
  let state: 'warming' | 'measuring' | 'closed' = 'warming';
  const answered = new WeakSet<object>();
  let answeredCount = 0;
  let warmupResponses = 0;
  const warmupRequests = job.warmupRequests ?? 0;
  const latencies: number[] = [];
  const body = requestBody(job);

  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        // autocannon takes an array of URLs and spreads the connections over them round-robin (lib/url.js,
        // lib/run.js); its type declarations admit a string only.
        url: (job.urls.length === 1 ? job.urls[0] : job.urls) as string,
        connections: job.connections,
        // An upper bound: the run is stopped when the window closes.
        duration: job.warmupSeconds + job.durationSeconds + MAX_RAMP_MS / 1000 + 10,
        method: job.method,
        headers: job.headers,
        requests: [
          {
            // One shared counter over all connections walks the list, so the paths spread evenly over the run.
            setupRequest: (request) => {
              const n = sent++;
              const path = job.paths[n % job.paths.length] ?? '/';
              const text = body(n);
              const cycled = job.cycledHeader;
              const headers = cycled
                ? { ...request.headers, [cycled.name]: cycled.values[n % cycled.values.length] ?? '' }
                : request.headers;
              return text === undefined ? { ...request, path, headers } : { ...request, path, headers, body: text };
            },
          },
        ],
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const seconds = (windowEnd - windowStart) / 1000;
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          requests: sorted.length,
          durationSeconds: seconds,
          requestsPerSecond: sorted.length / seconds,
          latencyMs: {
            mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(sorted.length, 1),
            p50: percentile(sorted, 50),
            p99: percentile(sorted, 99),
            max: sorted.at(-1) ?? 0,
          },
          rampSeconds,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, Number(stats.count)]),
          ),
        });
      },
    );

    const closeWindow = () => {
      state = 'closed';
      windowEnd = performance.now();
      send({ kind: 'window-closed' });
      instance.stop();
    };
    const openWindowWhenReady = () => {
      const ramped = rampSeconds !== null || performance.now() - started > MAX_RAMP_MS;
      if (state === 'warming' && warmedUp && ramped && warmupResponses >= warmupRequests) {
        state = 'measuring';
        windowStart = performance.now();
        send({ kind: 'window-open' });
        setTimeout(closeWindow, job.durationSeconds * 1000);
      }
    };
    setTimeout(() => {
      warmedUp = true;
      openWindowWhenReady();
    }, job.warmupSeconds * 1000);
    const rampDeadline = setTimeout(openWindowWhenReady, MAX_RAMP_MS);

    // autocannon's histogram keeps whole milliseconds of 2xx responses only; this keeps every response of the window.
    // Status codes, non-2xx and errors come from autocannon, over the whole run: a failure while warming up counts.
    instance.on('response', (client, _status, _bytes, responseTime) => {
      if (state === 'measuring') {
        latencies.push(responseTime);
        return;
      }
      warmupResponses++;
      if (warmupResponses === warmupRequests) {
        openWindowWhenReady();
      }
      if (rampSeconds === null && !answered.has(client)) {
        answered.add(client);
        answeredCount++;
        if (answeredCount === job.connections) {
          rampSeconds = (performance.now() - started) / 1000;
          clearTimeout(rampDeadline);
          openWindowWhenReady();
        }
      }
    });
  });
}

process.on('message', (job: LoadJob) => {
  runJob(job).then(
    (result) => send({ kind: 'done', result }),
    (error: unknown) => send({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
