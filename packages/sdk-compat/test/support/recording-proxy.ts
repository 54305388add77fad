import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as it arrived on the wire, before the server read it. */
export interface RecordedRequest {
  method: string;
  /** The path and query string. */
  url: string;
  /** Header names in lower case, as Node parses them. */
  headers: IncomingHttpHeaders;
}

/** A pass-through HTTP proxy in front of a server, which records every request it forwards. */
export interface RecordingProxy {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free port of 127.0.0.1 that forwards every request unchanged to `target` and streams the
 * answer back unchanged. The server records no request headers (its log holds none, on purpose), so this is how a
 * test sees exactly what an unmodified client sends, without giving it a custom `fetch`.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const outgoing = forward(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    outgoing.on('error', (error) => res.destroy(error));
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
