/**
 * Sends one request the fuzzer reported, byte for byte, to a running server and prints the answer:
 *
 *   HOST=127.0.0.1:8080 ADMIN_KEY=sk-adm-... KEY_ID=apikey_... npx tsx test/fuzz/replay.ts /tmp/apikeys-fuzz-....json
 *
 * Each placeholder of the request (`$ADMIN_KEY`, `$KEY_ID`, ...) is read from the variable of the same name; one
 * that is not set is sent as it is.
 */
import { readFileSync } from 'node:fs';
import { exchange } from './exchange.js';
import { type Bindings, PLACEHOLDERS } from './placeholders.js';
import { type FuzzRequest, wireBytes } from './request.js';

const [file] = process.argv.slice(2);
if (!file || !process.env.HOST) {
  process.stderr.write('usage: HOST=host:port [ADMIN_KEY=... KEY_ID=... ...] tsx test/fuzz/replay.ts REQUEST.json\n');
  process.exit(2);
}
const request = JSON.parse(readFileSync(file, 'utf8')) as FuzzRequest;
const bindings = Object.fromEntries(PLACEHOLDERS.map((name) => [name, process.env[name.slice(1)] ?? name])) as Bindings;
const { hostname, port } = new URL(`http://${process.env.HOST}`);
const answer = await exchange(Number(port), wireBytes(request, bindings).bytes, {
  head: request.method === 'HEAD',
  timeoutMs: 30_000,
  host: hostname,
});
if (answer.answered) {
  process.stdout.write(`${answer.head}\r\n\r\n${answer.body.toString('utf8')}\n`);
} else {
  process.stdout.write(`no answer: ${answer.reason}\n${answer.partial}\n`);
  process.exitCode = 1;
}
