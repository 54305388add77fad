// Reference 1: bare node:http answering with a JSON string computed once at start, the cheapest possible server.
import { createServer } from 'node:http';
import { firstPage, limitOf, loadItems, logListening } from './page.js';

const items = loadItems();
const bodies = { 20: JSON.stringify(firstPage(items, 20)), 1000: JSON.stringify(firstPage(items, 1000)) };

const server = createServer((req, res) => {
  const body = bodies[limitOf(req.url)];
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => logListening(server.address()));
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
