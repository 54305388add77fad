import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** The metrics listener, started. */
export interface MetricsServer {
  /** Where it listens, e.g. `http://127.0.0.1:9464` (the port the system chose when asked for port 0). */
  url: string;
  /** Stops listening and closes its connections (a scraper keeps one alive between scrapes). */
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** `GET /metrics` (any query string) answers the registry in the Prometheus text format; anything else 404. */
function serveMetrics(registry: Registry) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      answer(res, 404, 'text/plain; charset=utf-8', 'not found: metrics are at GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => answer(res, 200, registry.contentType, text),
      () => answer(res, 500, 'text/plain; charset=utf-8', 'metrics could not be collected\n'),
    );
  };
}

/**
 * Serves the registry on a listener of its own, apart from the API's port, so that metrics are reachable only where
 * the operator binds them (`METRICS_HOST`, loopback by default) and never through the API by accident. Plain
 * node:http: no API pipeline (authentication, version, validation) applies to it.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  registry: Registry;
}): Promise<MetricsServer> {
  const server = createServer(serveMetrics(options.registry));
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: Error) =>
      reject(new Error(`metrics cannot listen on METRICS_HOST/METRICS_PORT: ${error.message}`, { cause: error }));
    server.once('error', refuse);
    server.listen(options.port, options.host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
