// The gateway of the `gateway` scenario: an Express app whose one route, GET /orders, is protected by the README's
// middleware `requireApiKey` (imported from the client's example, so that what is measured is what the README
// ships), in the form GATEWAY_FORM says:
//   cached  a caching verifier (`createVerifierClient({ cache: true })`) of the key server at KEY_SERVER_URL
//   cached-requirement  the same, each verification with the permission requirement GATEWAY_REQUIREMENT
//   plain   a verifier without a cache: one verification by the key server per request
//   floor   no key service: a middleware that accepts the one key FLOOR_KEY by string comparison
// It logs `listening`, then `ready` (in cached form once the verifier's change feed is live), as the harness expects.
import { createVerifierClient, type VerifierClient } from '@apikeys/client';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
// The example is no export of the client package: it is the README's code, reached by its path.
import { requireApiKey } from '../../../../packages/client/examples/require-api-key.js';
import { GATEWAY_FORMS, type GatewayForm } from './forms.js';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} must be set`);
  }
  return value;
};

const form = process.env.GATEWAY_FORM as GatewayForm;
if (!GATEWAY_FORMS.includes(form)) {
  throw new Error(`GATEWAY_FORM must be one of ${GATEWAY_FORMS.join(', ')} (got ${JSON.stringify(form)})`);
}

/** The floor: the same answer as the middleware's for the one key it knows, without asking anyone. */
function acceptOneKey(key: string): RequestHandler {
  const apiKey = Object.freeze({ id: 'apikey_floor' });
  return (req, res, next) => {
    if (req.get('x-api-key') === key) {
      res.locals.apiKey = apiKey;
      next();
    } else {
      res.status(401).json({ error: 'NOT_FOUND' });
    }
  };
}

/**
 * The verifier as the README's middleware sees it, with `permissions` added to every verification: the middleware
 * calls `keys.verify(secret)` alone.
 */
function requiring(verifier: VerifierClient, permissions: string): VerifierClient {
  return {
    apiVersion: verifier.apiVersion,
    keys: { verify: (secret, options) => verifier.keys.verify(secret, { ...options, permissions }) },
    cache: verifier.cache,
    close: () => verifier.close(),
  };
}

let verifier: VerifierClient | undefined;
let guard: RequestHandler;
if (form === 'floor') {
  guard = acceptOneKey(required('FLOOR_KEY'));
} else {
  verifier = createVerifierClient({
    baseUrl: required('KEY_SERVER_URL'),
    apiKey: required('VERIFIER_KEY'),
    ...(form !== 'plain' && { cache: true }),
  });
  guard = requireApiKey(
    form === 'cached-requirement' ? requiring(verifier, required('GATEWAY_REQUIREMENT')) : verifier,
  );
}

const app = express();
app.get('/orders', guard, (_req, res) => {
  res.json({ orders: [], key: (res.locals.apiKey as { id: string }).id });
});
app.use(((_error, _req, res, _next) => {
  res.status(503).json({ error: 'verification unavailable' });
}) as ErrorRequestHandler);

const log = (fields: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(fields)}\n`);
const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', async () => {
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  log({ msg: 'listening', url, form });
  // A caching verifier answers from memory only once its feed is live: the measured gateway must be.
  while (verifier?.cache && !verifier.cache.live) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  log({ msg: 'ready', url, form });
});
process.once('SIGTERM', () => {
  server.close(() => {
    // The verifier's last usage report goes to the key server first.
    (verifier?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  });
  server.closeAllConnections();
});
