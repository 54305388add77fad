/**
 * The client as a gateway author gets it: `pnpm pack` (which builds dist/ first), `npm install` of the tarball into an
 * empty project outside the workspace, a TypeScript program in strict mode that imports it, type-checked and run
 * against a started server. A tarball that names a workspace package, or declarations that import one, fail here.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));
const PNPM = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')).packageManager as string;
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const PROGRAM = `import { createAdminClient, createVerifierClient, NotFoundError, type ApiKey } from '@apikeys/client';

declare const process: { env: Record<string, string | undefined> };

const client = createAdminClient({ baseUrl: process.env.BASE_URL ?? '', apiKey: process.env.ADMIN_KEY ?? '' });
const created = await client.apiKeys.create({ name: 'from the packed client' });
const listed: ApiKey[] = (await client.apiKeys.list({ limit: 10 })).data;
let missing = 'found';
try {
  await client.apiKeys.retrieve('apikey_doesnotexist0000000000');
} catch (error) {
  missing = error instanceof NotFoundError ? 'not found' : String(error);
}
const verifier = createVerifierClient({ baseUrl: process.env.BASE_URL ?? '', apiKey: process.env.ADMIN_KEY ?? '', cache: true });
const verified = (await verifier.keys.verify(created.key)).valid;
await verifier.close();
console.log(JSON.stringify({ created: created.name, secret: created.key.startsWith('sk-api-'), listed: listed.length, missing, verified }));
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    outDir: 'out',
    skipLibCheck: false,
  },
  include: ['main.ts'],
};

let project: string;
let server: TestServer;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'apikeys-packed-client-'));
  await run('npx', ['-y', PNPM, 'pack', '--pack-destination', project], { cwd: PACKAGE });
  const tarball = readdirSync(project).find((name) => name.endsWith('.tgz'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'gateway', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', `./${tarball}`], { cwd: project });
  writeFileSync(join(project, 'main.ts'), PROGRAM);
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  server = await startTestServer();
}, 180_000);

afterAll(async () => {
  await server?.close();
  rmSync(project, { recursive: true, force: true });
});

describe('the packed client, installed outside the workspace', () => {
  it('depends on no workspace package, and its declarations import none', () => {
    const installed = join(project, 'node_modules', '@apikeys', 'client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    const declarations = readFileSync(join(installed, 'dist', 'index.d.ts'), 'utf8');

    expect(Object.keys(manifest.dependencies)).toEqual(['eventsource-parser', 'lru-cache', 'openapi-fetch']);
    expect(declarations).not.toMatch(/@apikeys\//);
    expect(readdirSync(join(project, 'node_modules', '@apikeys'))).toEqual(['client']);
  });

  it('type-checks in strict mode, and runs against a started server', async () => {
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project });
    const organization = await server.createOrganization('packed client');

    const { stdout } = await run(process.execPath, [join(project, 'out', 'main.js')], {
      cwd: project,
      env: { ...process.env, BASE_URL: server.baseUrl, ADMIN_KEY: organization.adminKey },
    });

    expect(JSON.parse(stdout)).toEqual({
      created: 'from the packed client',
      secret: true,
      listed: 1,
      missing: 'not found',
      verified: true,
    });
  });

  it('fails to type-check a program that misuses it', async () => {
    writeFileSync(
      join(project, 'main.ts'),
      `${PROGRAM}\nawait createAdminClient({ baseUrl: 1 }).apiKeys.list({ limit: 'ten' });\n`,
    );

    const failure = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }).catch((error) => error);

    expect(failure).toBeInstanceOf(Error);
    expect(String(failure.stdout)).toMatch(/error TS2322|error TS2345|error TS2741/);
  });
});
