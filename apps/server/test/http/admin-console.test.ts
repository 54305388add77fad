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
import { CONSOLE_CONTENT_SECURITY_POLICY, chooseEncoding } from '../../src/http/console/admin-console.js';

// The console is built before the server's tests run (turbo: @apikeys/server#test depends on @apikeys/console#build).
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const get = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, { redirect: 'manual', ...init });

/** A GET with exactly these headers (fetch would add its own Accept-Encoding and decompress), its body as bytes. */
function getBytes(path: string, headers: Record<string, string>): Promise<{ headers: Headers; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(`${server.baseUrl}${path}`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const received = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          received.set(name, String(value));
        }
        resolve({ headers: received, body: Buffer.concat(chunks) });
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
    expect((await get(script)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
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
        expect(response.headers.get('vary'), url).toBe('accept-encoding');
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
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['GZIP;q=0.5, br;q=0.8', 'br'],
    ['gzip, br;q=0', 'gzip'],
    ['br;q=0.1, gzip', 'gzip'],
    ['*', 'br'],
    ['*, br;q=0', 'gzip'],
    ['gzip;q=0, br;q=0', undefined],
    ['gzip;q=nonsense', undefined],
  ])('picks the encoding for Accept-Encoding %j: %s', (header, encoding) => {
    expect(chooseEncoding(header)).toBe(encoding);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const [head, full] = await Promise.all([get('/console', { method: 'HEAD' }), get('/console')]);

    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-security-policy')).toBe(full.headers.get('content-security-policy'));
    expect(head.headers.get('content-length')).toBe(full.headers.get('content-length'));
  });

  it.each(['GET', 'HEAD'])(
    'answers %s of a file missing from /console/assets/ with a 404 in the API error shape, without API headers',
    async (method) => {
      const response = await get('/console/assets/index-00000000.js', { method });

      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      if (method === 'GET') {
        const body = (await response.json()) as { error: { type: string; message: string } };
        expectMatchesSpec(undefined, response, body);
        expect(body.error).toEqual({
          type: 'not_found_error',
          message: 'the admin console has no file at /console/assets/index-00000000.js: reload the page',
        });
      }
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
