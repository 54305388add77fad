// Reference 3: Express 5 with express-openapi-validator checking every request and response against the real spec,
// configured by the server's own function: it serves the page from an in-memory array, and verifies a secret by its
// SHA-256 in an in-memory map. No authentication, logging or database: the floor that the spec validation alone puts
// under the real server.
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { validateWithSpec } from '@apikeys/server/validate-with-spec';
import { loadSpec } from '@apikeys/spec';
import express from 'express';
import { firstPage, loadItems, logListening } from './page.js';
import { hashOf, loadVerifications, NOT_FOUND } from './verifications.js';

const VERIFY = '/v1/keys/verify';

const items = loadItems();
const verifications = loadVerifications();
// The bench lists keys in the first version and verifies them in the latest, the first to have the operation: each
// request is validated against the document of its version.
const firstVersion = express.Router().use(validateWithSpec(loadSpec()));
const latestVersion = express.Router().use(validateWithSpec(loadSpec(LATEST_API_VERSION)));

const app = express();
app.use(express.json());
app.use((req, res, next) => (req.path === VERIFY ? latestVersion : firstVersion)(req, res, next));
app.get('/v1/organizations/api_keys', (req, res) => {
  res.json(firstPage(items, Number(req.query.limit)));
});
app.post(VERIFY, (req, res) => {
  res.json(verifications.get(hashOf((req.body as { key: string }).key)) ?? NOT_FOUND);
});
app.use(
  (
    error: { status?: number; message?: string },
    _req: express.Request,
    res: express.Response,
    _next: express.NextFunction,
  ) => {
    // Any error is a failure of the run (the harness counts non-2xx responses); the body need not follow the spec.
    res
      .status(error.status ?? 500)
      .type('text')
      .send(error.message ?? 'error');
  },
);

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () =>
  logListening(server.address()),
);
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
