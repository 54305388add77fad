import type { AddressInfo } from 'node:net';
import express from 'express';
import { requireApiKey } from '../../examples/require-api-key.js';
import { createVerifierClient, type VerifierClient } from '../../src/index.js';

/** A gateway as the README builds it, listening on a free port of 127.0.0.1. */
export interface ReadmeGateway {
  url: string;
  verifier: VerifierClient;
  /** Stops listening and closes the verifier; once only, however often it is called. */
  close(): Promise<void>;
}

/** What the gateway answered: the status, the headers a client reads, and the body as text. */
export interface GatewayAnswer {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  text: string;
}

/**
 * The README's gateway ("Verifying keys in a gateway"): a caching verifier with nothing but `baseUrl`, `apiKey` and
 * `cache: true`, so every other setting is the client's default, and the README's middleware in front of `/orders`,
 * with no error handler of the gateway's own.
 */
export async function startReadmeGateway(keyServerUrl: string, verifierKey: string): Promise<ReadmeGateway> {
  const verifier = createVerifierClient({ baseUrl: keyServerUrl, apiKey: verifierKey, cache: true });
  const app = express();
  app.get('/orders', requireApiKey(verifier), (_req, res) => {
    res.json({ orders: [], key: res.locals.apiKey.id });
  });
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
    verifier,
    close() {
      closing ??= (async () => {
        listening.closeAllConnections();
        await new Promise((resolve) => listening.close(resolve));
        await verifier.close();
      })();
      return closing;
    },
  };
}

/** `GET /orders` of the gateway, with `key` in `x-api-key` when given; gives up after `timeoutMs`. */
export async function getOrders(gatewayUrl: string, key?: string, timeoutMs = 30_000): Promise<GatewayAnswer> {
  const response = await fetch(`${gatewayUrl}/orders`, {
    ...(key === undefined ? {} : { headers: { 'x-api-key': key } }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    text: await response.text(),
  };
}
