// Reference 3: Express 5 with express-openapi-validator checking every request and response against the real spec,
// configured by the server's own function, serving the page from an in-memory array. No authentication, logging or
// database: the floor that the spec validation alone puts under the real server.
import { validateWithSpec } from '@apikeys/server/validate-with-spec';
import { loadSpec } from '@apikeys/spec';
import express from 'express';
import { firstPage, loadItems, logListening } from './page.js';

const items = loadItems();
const app = express();
app.use(validateWithSpec(loadSpec()));
app.get('/v1/organizations/api_keys', (req, res) => {
  res.json(firstPage(items, Number(req.query.limit)));
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
