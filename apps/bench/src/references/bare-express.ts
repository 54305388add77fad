// Reference 2: bare Express 5 with its default settings, serialising the page with `res.json` on every request
// from an in-memory array. No validation, authentication, logging or database.
import express from 'express';
import { firstPage, limitOf, loadItems, logListening } from './page.js';

const items = loadItems();
const app = express();
app.get('/v1/organizations/api_keys', (req, res) => {
  res.json(firstPage(items, limitOf(req.url)));
});

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () =>
  logListening(server.address()),
);
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
