import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  authHeaders,
  expectError,
  expectMatchesSpec,
  parseRawResponse,
  sendRaw,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../src/http/console/admin-console.js';

// The console is built before the server's tests run (turbo: @apikeys/server#test depends on @apikeys/console#build).
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const get = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, { redirect: 'manual', ...init });

/** A GET or HEAD with exactly these headers (fetch would add its own Accept-Encoding and decompress). */
function getBytes(
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(`${server.baseUrl}${path}`, { headers, method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const received = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          received.set(name, String(value));
        }
        resolve({ status: response.statusCode ?? 0, headers: received, body: Buffer.concat(chunks) });
      });
    })
      .on('error', reject)
      .end();
  });
}

/** The `src` and `href` URLs of the page's scripts, stylesheets and icon. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
}

/** The URL of the page's script. */
async function scriptUrl(): Promise<string> {
  return assetUrls(await (await get('/console')).text()).find((url) => url.endsWith('.js')) as string;
}

/**
 * Asserts a 404 in the API's error shape for a file missing from the console's build; `path` is what its message
 * says of the path (`at /console/...`, or `at this path` for a path it may not repeat).
 */
async function expectMissingFile(response: Response, path: string): Promise<void> {
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('content-encoding')).toBeNull();
  const body = (await response.json()) as { error: { type: string; message: string } };
  expectMatchesSpec(undefined, response, body);
  expect(body.error).toEqual({
    type: 'not_found_error',
    message: `the admin console has no file ${path}: reload the page`,
  });
}

describe('the admin console at /console', () => {
  it.each(['/console', '/console/', '/console/index.html', '/console/keys/apikey_01', '/console/keys/new?x=1'])(
    'answers %s with the page, a strict Content-Security-Policy and no inline script, never stored',
    async (path) => {
      const response = await get(path);
      const html = await response.text();

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
      expect(CONSOLE_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(html).toContain('<div id="root"></div>');
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/\sstyle=/);
    },
  );

  it('loads only its own hashed assets, each cached for a year, and its icon', async () => {
    const urls = assetUrls(await (await get('/console')).text());

    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      expect(url).toMatch(/^\/console\//);
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      if (url.startsWith('/console/assets/')) {
        expect(url).toMatch(/-[A-Za-z0-9_-]{8}\.(?:js|css)$/);
        expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
    }
    const script = urls.find((url) => url.endsWith('.js')) as string;
    // Charset names are case-insensitive: express-static-gzip writes UTF-8 for a compressed copy.
    expect((await get(script)).headers.get('content-type')).toMatch(/^text\/javascript; charset=utf-8$/i);
  });

  it('revalidates its icon on every load', async () => {
    const response = await get('/console/favicon.svg');

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  });

  it('sends its scripts and styles compressed to a browser that accepts it, and the same bytes to one that does not', async () => {
    const urls = assetUrls(await (await get('/console')).text()).filter((url) => /\.(?:js|css)$/.test(url));
    expect(urls.length).toBeGreaterThanOrEqual(2);

    for (const url of urls) {
      const plain = await getBytes(url, {});
      const gzip = await getBytes(url, { 'accept-encoding': 'gzip, deflate' });
      const brotli = await getBytes(url, { 'accept-encoding': 'gzip, deflate, br, zstd' });

      expect(plain.headers.get('content-encoding'), url).toBeNull();
      expect(gzip.headers.get('content-encoding'), url).toBe('gzip');
      expect(brotli.headers.get('content-encoding'), url).toBe('br');
      for (const response of [plain, gzip, brotli]) {
        expect(response.headers.get('vary')?.toLowerCase(), url).toBe('accept-encoding');
        expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
      }
      expect(gunzipSync(gzip.body).equals(plain.body), url).toBe(true);
      expect(brotliDecompressSync(brotli.body).equals(plain.body), url).toBe(true);
      expect(brotli.body.length).toBeLessThan(plain.body.length / 2);
      expect(Number(gzip.headers.get('content-length'))).toBe(gzip.body.length);
    }
  });

  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['deflate', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip;q=0.5, br;q=0.8', 'br'],
    ['gzip, br;q=0', 'gzip'],
    ['br;q=0, gzip;q=0.1', 'gzip'],
    ['*', 'br'],
    ['gzip;q=0, br;q=0', null],
    ['identity, gzip;q=0.5', null],
    ['gzip;q=nonsense', null],
  ])('answers Accept-Encoding %j with the script in encoding %s', async (acceptEncoding, encoding) => {
    const url = await scriptUrl();
    const plain = await getBytes(url, {});

    const response = await getBytes(url, acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe(encoding);
    const decoded =
      encoding === 'br'
        ? brotliDecompressSync(response.body)
        : encoding === 'gzip'
          ? gunzipSync(response.body)
          : response.body;
    expect(decoded.equals(plain.body)).toBe(true);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const [head, full] = await Promise.all([get('/console', { method: 'HEAD' }), get('/console')]);

    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-security-policy')).toBe(full.headers.get('content-security-policy'));
    expect(head.headers.get('content-length')).toBe(full.headers.get('content-length'));
  });

  it.each(['br', 'gzip', 'identity'])(
    'answers HEAD of the script in %s with the headers of GET and no body',
    async (encoding) => {
      const url = await scriptUrl();
      const headers = { 'accept-encoding': encoding };
      const [head, full] = await Promise.all([getBytes(url, headers, 'HEAD'), getBytes(url, headers)]);

      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const name of ['content-encoding', 'content-length', 'content-type', 'cache-control', 'vary']) {
        expect(head.headers.get(name), name).toBe(full.headers.get(name));
      }
      expect(Number(head.headers.get('content-length'))).toBe(full.body.length);
    },
  );

  it('answers a range request with the whole file, and a conditional one for an unchanged file with 304', async () => {
    const url = await scriptUrl();
    const full = await getBytes(url, { 'accept-encoding': 'br' });

    const ranged = await getBytes(url, { 'accept-encoding': 'br', range: 'bytes=0-9' });
    const pastTheEnd = await getBytes(url, { 'accept-encoding': 'br', range: 'bytes=99999999-' });
    const conditional = await getBytes(url, {
      'accept-encoding': 'br',
      'if-none-match': full.headers.get('etag') as string,
    });

    for (const response of [ranged, pastTheEnd]) {
      expect(response.status).toBe(200);
      expect(response.body.equals(full.body)).toBe(true);
    }
    expect(conditional.status).toBe(304);
    expect(conditional.body.length).toBe(0);
  });

  it.each(['GET', 'HEAD'])(
    'answers %s of a file missing from /console/assets/ with a 404 in the API error shape, without API headers',
    async (method) => {
      const response = await get('/console/assets/index-00000000.js', { method });

      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      if (method === 'GET') {
        await expectMissingFile(response, 'at /console/assets/index-00000000.js');
      }
    },
  );

  it.each([
    ['a folder of the build', '/console/assets/', 'at /console/assets/'],
    ['a path whose percent-encoding does not decode', '/console/assets/%zz.js', 'at this path'],
    [
      'a compressed copy, by name, of a file that has none',
      '/console/assets/nothing.js.br',
      'at /console/assets/nothing.js.br',
    ],
  ])('answers %s under /console/assets/ with a 404 in the API error shape', async (_, path, shown) => {
    await expectMissingFile(await get(path, { headers: { 'accept-encoding': 'br, gzip' } }), shown);
  });

  it.each(['/console/assets', '/console/%zz', '/console/.env'])(
    'answers %s with the page, never a redirect or a text error',
    async (path) => {
      const page = await (await get('/console')).text();
      const response = await get(path);

      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.text()).toBe(page);
    },
  );

  it.each([
    '/console/../package.json',
    '/console/..%2f..%2fpackage.json',
    '/console/..%2F..%2F..%2F..%2Fpackage.json',
    '/console/%2e%2e/%2e%2e/package.json',
    '/console/..%5c..%5cpackage.json',
    '/console/assets/..%2f..%2findex.html',
    '/console/assets/../../package.json',
    '/console/assets/%2e%2e%2f%2e%2e%2fvite.config.ts',
    '/console/assets/..%2f..%2f..%2fserver%2fpackage.json',
    '/console/assets/%2e%2e/%2e%2e/package.json',
    '/console/assets/..\\..\\package.json',
    '/console/assets/%00../../package.json',
    '/console//..//..//package.json',
  ])('never serves a file outside the build for %s (sent raw, not normalized)', async (path) => {
    const page = await (await get('/console')).text();
    const raw = await sendRaw(server.baseUrl, `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
    const response = parseRawResponse(raw);

    expect([200, 404]).toContain(response.status);
    if (response.status === 200) {
      expect(response.body).toBe(page);
    } else {
      expect(JSON.parse(response.body)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    }
  });

  it.each([
    ['POST', '/console', 'no route for POST on /console'],
    ['GET', '/CONSOLE', 'no route for GET on this path'],
    ['GET', '/consoles', 'no route for GET on /consoles'],
  ])('passes %s %s on to the API, which answers a JSON 404', async (method, path, message) => {
    const result = await server.request(path, { method, headers: authHeaders(server.adminKey) });

    expectError(result, { operationId: undefined, status: 404, type: 'not_found_error', message });
  });
});

describe('a server whose console was not built', () => {
  let unbuilt: TestServer;
  let empty: string;

  beforeAll(async () => {
    empty = mkdtempSync(join(tmpdir(), 'apikeys-console-'));
    unbuilt = await startTestServer({ consoleDirectory: empty });
  });
  afterAll(async () => {
    await unbuilt?.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it.each(['/console', '/console/keys/new'])(
    'answers %s with a 404 in the API error shape that says how to build it',
    async (path) => {
      const response = await fetch(`${unbuilt.baseUrl}${path}`);
      const body = (await response.json()) as { error: { message: string } };

      expect(response.status).toBe(404);
      expectMatchesSpec(undefined, response, body);
      expect(body.error.message).toBe(
        'the admin console is not built: run `pnpm build` at the repository root, then restart the server',
      );
    },
  );
});
