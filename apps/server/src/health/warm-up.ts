import { request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback address the server answers on, for a server bound to `address` (which may be a wildcard). */
function loopbackFor({ address, family }: AddressInfo): string {
  if (address === '0.0.0.0') {
    return '127.0.0.1';
  }
  if (address === '::') {
    return '::1';
  }
  return family === 'IPv6' ? `[${address}]` : address;
}

/**
 * Sends the server its first request, `GET /health`, through the whole pipeline, so that express-openapi-validator
 * loads and compiles the spec now rather than on the first caller's request. Resolves when the answer is complete.
 */
export async function warmUp(address: AddressInfo): Promise<void> {
  const host = loopbackFor(address);
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: host.replace(/^\[|\]$/g, ''), port: address.port, path: '/health', agent: false });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`warm-up: /health answered ${res.statusCode}`)),
      );
    });
    req.once('error', reject);
    req.end();
  });
}
