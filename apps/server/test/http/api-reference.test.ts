import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { API_VERSIONS, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  expectError,
  expectMatchesSpec,
  expectNoInternals,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { loadSpec, versionDocumentPath } from '@apikeys/spec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The reference is public: every request below but the fall-through ones goes out without any header.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const get = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, { redirect: 'manual', ...init });

const swaggerUiFolder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The `src` and `href` URLs of the page's scripts, stylesheets and icon. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
}

describe('GET /openapi.yaml', () => {
  it("serves the exact bytes of the latest version's document as application/yaml, cached briefly", async () => {
    const response = await get('/openapi.yaml');

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/yaml');
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const committed = readFileSync(versionDocumentPath(LATEST_API_VERSION));
    expect(Buffer.from(await response.arrayBuffer()).equals(committed)).toBe(true);
  });
});

describe('GET /openapi.json', () => {
  it("serves the latest version's document as JSON", async () => {
    const response = await get('/openapi.json');

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await response.json()).toEqual(loadSpec(LATEST_API_VERSION));
  });
});

describe('GET /docs', () => {
  it('is an HTML page with a strict Content-Security-Policy and no inline script', async () => {
    const response = await get('/docs');
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("connect-src 'self';");
    expect(policy).not.toContain('unsafe');
    expect(html).toContain('<div id="swagger-ui"></div>');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts).toHaveLength(2);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="/);
      expect(body).toBe('');
    }
  });

  it('loads only fingerprinted assets of this server, each served with a year-long cache', async () => {
    const html = await (await get('/docs')).text();
    const urls = assetUrls(html);

    expect(urls).toHaveLength(5);
    for (const url of urls) {
      expect(url).toMatch(/^\/docs\/assets\/[0-9a-f]{16}\/[\w.-]+$/);
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
      await response.arrayBuffer();
    }
  });

  it("serves swagger-ui-dist's bundle and stylesheet unchanged", async () => {
    const urls = assetUrls(await (await get('/docs')).text());

    for (const [name, contentType] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
    ] as const) {
      const url = urls.find((candidate) => candidate.endsWith(`/${name}`));
      expect(url, name).toBeDefined();
      const response = await get(url as string);
      expect(response.headers.get('content-type')).toBe(contentType);
      expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(swaggerUiFolder, name)))).toBe(true);
    }
  });

  it("starts Swagger UI on each version's document, latest first, with the call to validator.swagger.io turned off", async () => {
    const urls = assetUrls(await (await get('/docs')).text());
    const initializer = urls.find((url) => url.endsWith('/docs-initializer.js')) as string;

    const script = await (await get(initializer)).text();

    const offered = [...script.matchAll(/"url":"([^"]+)"/g)].map((match) => match[1]);
    expect(offered).toEqual([...API_VERSIONS].reverse().map((version) => `/openapi/${version}.json`));
    expect(script).toContain('validatorUrl: null');
    expect(script).toContain('queryConfigEnabled: false');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const [head, full] = await Promise.all([get('/docs', { method: 'HEAD' }), get('/docs')]);

    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await full.text())));
    expect(head.headers.get('content-security-policy')).toBe(full.headers.get('content-security-policy'));
  });

  it('redirects /docs/ to /docs', async () => {
    const response = await get('/docs/?section=x');

    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/docs');
  });
});

describe('requests the reference does not serve', () => {
  const cases = [
    ['POST', '/docs', 'no route for POST on /docs'],
    ['PUT', '/docs/', 'no route for PUT on /docs/'],
    ['DELETE', '/openapi.json', 'no route for DELETE on this path'],
    ['POST', '/openapi.yaml', 'no route for POST on this path'],
    ['GET', '/DOCS', 'no route for GET on this path'],
    ['GET', '/docs/assets/0000000000000000/swagger-ui-bundle.js', 'no route for GET on this path'],
  ] as const;

  it.each(cases)('%s %s passes on to the API, which answers a JSON 404', async (method, path, message) => {
    const result = await server.request(path, { method, headers: authHeaders(server.adminKey) });

    expectError(result, { operationId: undefined, status: 404, type: 'not_found_error', message });
  });

  it('answers a request with no header in the API error shape, never an HTML page', async () => {
    const { response, body, text } = await server.request('/docs', { method: 'POST' });

    expect(response.status).toBe(400);
    expectMatchesSpec(undefined, response, body);
    expectNoInternals(text);
  });
});
