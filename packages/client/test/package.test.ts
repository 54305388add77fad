import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Asynchronous on purpose: the API server the packed client talks to runs in this process.
const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const distDir = join(packageDir, 'dist');
/** What the package imports at run time, besides its own modules: its dependencies. */
const DEPENDENCIES = ['eventsource-parser', 'lru-cache', 'openapi-fetch'];

/** Every file under a directory, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** The module specifiers of a compiled file's static and dynamic imports and exports. */
function specifiers(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');
}

describe('the built package', () => {
  beforeAll(async () => {
    rmSync(distDir, { recursive: true, force: true });
    // What `pnpm run build` runs: esbuild bundles dist/index.js, tsc writes the declarations.
    await run(process.execPath, ['build.mjs'], { cwd: packageDir });
  }, 60_000);

  it('is ESM with declarations next to every module', () => {
    const files = filesUnder(distDir);

    expect(files).toContain('index.js');
    expect(files).toContain('index.d.ts');
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      expect(files).toContain(file.replace(/\.js$/, '.d.ts'));
    }
  });

  it('imports nothing Node-only at run time: no node: modules, no require, no process or Buffer', () => {
    const modules = filesUnder(distDir).filter((name) => name.endsWith('.js'));
    expect(modules.length).toBeGreaterThan(0);

    for (const file of modules) {
      const code = readFileSync(join(distDir, file), 'utf8');
      // The one exception, the caching verifier's node:crypto, is loaded when one is created, by a specifier in a
      // variable that bundlers do not follow: no import names it.
      expect(code.match(/['"]node:[^'"]*['"]/g) ?? [], file).toEqual(file === 'index.js' ? ['"node:crypto"'] : []);
      expect(code, file).not.toMatch(/\brequire\s*\(|\bprocess\.|\bBuffer\b|\b__dirname\b/);
      for (const specifier of specifiers(code)) {
        expect(specifier.startsWith('./') || DEPENDENCIES.includes(specifier), `${file} imports ${specifier}`).toBe(
          true,
        );
      }
    }
  });

  it('bundles the facts generated from the spec into dist/index.js instead of importing @apikeys/api-types', () => {
    const code = readFileSync(join(distDir, 'index.js'), 'utf8');

    expect(specifiers(code)).not.toContain('@apikeys/api-types');
    expect(code).not.toMatch(/@apikeys\/api-types/);
    // The version the client sends by default is in the bundle itself.
    expect(code).toContain(JSON.stringify(LATEST_API_VERSION));
    expect(filesUnder(distDir)).toContain('index.d.ts');
    expect(readFileSync(join(distDir, 'index.d.ts'), 'utf8')).toMatch(/\bcreateAdminClient\b/);
  });
});

describe('the packed package, in plain Node', () => {
  let server: TestServer;
  let consumerDir: string;
  let manifest: {
    exports: unknown;
    types: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  let packed: string[];

  beforeAll(async () => {
    server = await startTestServer();
    consumerDir = mkdtempSync(join(tmpdir(), 'apikeys-client-'));
    // `pnpm pack` builds (prepack) and writes the manifest as published: publishConfig applied, workspace: and
    // catalog: versions resolved.
    await run('npx', ['-y', 'pnpm@10.34.9', 'pack', '--pack-destination', consumerDir], { cwd: packageDir });
    const tarball = readdirSync(consumerDir).find((name) => name.endsWith('.tgz')) ?? '';
    await run('tar', ['-xzf', tarball], { cwd: consumerDir });
    const installed = join(consumerDir, 'node_modules', '@apikeys', 'client');
    mkdirSync(join(consumerDir, 'node_modules', '@apikeys'), { recursive: true });
    renameSync(join(consumerDir, 'package'), installed);
    for (const dependency of DEPENDENCIES) {
      symlinkSync(
        realpathSync(join(packageDir, 'node_modules', dependency)),
        join(consumerDir, 'node_modules', dependency),
      );
    }
    manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    packed = filesUnder(installed);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (consumerDir) {
      rmSync(consumerDir, { recursive: true, force: true });
    }
  });

  it('ships dist, the README and the manifest only, with the exports map pointing at dist', () => {
    expect(packed.filter((file) => !file.startsWith('dist/'))).toEqual(['README.md', 'package.json']);
    expect(manifest.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
    expect(manifest.types).toBe('./dist/index.d.ts');
    expect(JSON.stringify(manifest)).not.toMatch(/workspace:|catalog:/);
    expect(manifest.dependencies['openapi-fetch']).toMatch(/^\^0\.17\./);
    expect(Object.keys(manifest.dependencies).sort()).toEqual(DEPENDENCIES);
  });

  it('resolves through the exports map to dist/index.js and talks to the API', async () => {
    const script = `
      import * as client from '@apikeys/client';
      const api = client.createAdminClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
      const page = await api.apiKeys.list({ limit: 2 });
      const notFound = await api.apiKeys.retrieve('apikey_missing').catch((error) => error);
      console.log(JSON.stringify({
        resolved: import.meta.resolve('@apikeys/client'),
        exports: Object.keys(client).sort(),
        defaultVersion: client.DEFAULT_API_VERSION,
        page: page.toJSON(),
        notFound: { isNotFound: notFound instanceof client.NotFoundError, status: notFound.status, type: notFound.type },
      }));
    `;

    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: consumerDir,
      env: { ...process.env, BASE_URL: server.baseUrl, API_KEY: server.adminKey, NODE_OPTIONS: '' },
    });

    const result = JSON.parse(stdout);
    expect(result.resolved).toMatch(/\/node_modules\/@apikeys\/client\/dist\/index\.js$/);
    expect(result.exports).toEqual(
      expect.arrayContaining(['createAdminClient', 'ApiKeyPage', 'ApiKeysError', 'NotFoundError', 'TimeoutError']),
    );
    expect(result.defaultVersion).toBe(LATEST_API_VERSION);
    expect(result.page).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    expect(result.notFound).toEqual({ isNotFound: true, status: 404, type: 'not_found_error' });
  });
});
