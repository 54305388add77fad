import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from '../errors/http-error.js';
import { immutable, type StaticResource } from '../reference/static-resource.js';

/** Where the admin console is served: the page at `/console` and under it, its files under `/console/assets/`. */
export const CONSOLE_PATH = '/console';

/**
 * What the console may load and call: its own scripts, styles, images and this server's API, nothing inline, no
 * frames, no other origin. The admin key the console holds can therefore reach no other server, even from injected
 * markup.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every console response: the policy, and no `Referer` that would carry a key's ID elsewhere. */
const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
} as const;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The console's build output, `apps/console/dist`: found from the server package's folder (the nearest
 * package.json above this module), which is `apps/server` both when the server runs from its sources (tsx, tests)
 * and from its bundle (`dist/main.js`). The server cannot depend on the console package to resolve it, because the
 * console depends on `@apikeys/client`, whose tests depend on the server: a cycle that turbo refuses.
 */
export function consoleBuildDirectory(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) {
      throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    }
    folder = parent;
  }
  return join(folder, '..', 'console', 'dist');
}

/** The encodings the console's scripts and styles are kept in, besides their own bytes; preferred first. */
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

/** The types worth compressing: the scripts and styles, a hundred KB of text (the page and the icon are tiny). */
const COMPRESSED_TYPES = new Set(['.js', '.css']);

/** A file of the build, with its compressed copies when it is one of `COMPRESSED_TYPES`. */
interface ConsoleFile extends StaticResource {
  compressed?: Readonly<Record<Encoding, Buffer>>;
}

/** The console's files by URL path, or null when the console was not built. */
interface ConsoleFiles {
  page: StaticResource;
  files: ReadonlyMap<string, ConsoleFile>;
}

/**
 * The compressed copies of a file, made once when the server starts. Brotli at quality 9, not 11: 11 saves another
 * 7 KB of the script but takes half a second, which every server start (and every test file) would pay.
 */
function compress(body: Buffer): Record<Encoding, Buffer> {
  return {
    br: brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzip: gzipSync(body, { level: 9 }),
  };
}

/**
 * The encoding to send, by the request's `Accept-Encoding` (`q=0` refuses one, `*` stands for the others unnamed):
 * the one of highest weight, Brotli on a tie; undefined for the file's own bytes (no header, or neither accepted).
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (name !== '') {
      const quality = parameters.find((parameter) => parameter.startsWith('q='));
      weights.set(name, quality === undefined ? 1 : Number(quality.slice(2)) || 0);
    }
  }
  let chosen: Encoding | undefined;
  let weight = 0;
  for (const encoding of ENCODINGS) {
    const candidate = weights.get(encoding) ?? weights.get('*') ?? 0;
    if (candidate > weight) {
      chosen = encoding;
      weight = candidate;
    }
  }
  return chosen;
}

function listFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Reads the build output once. Files under `assets/` are named by their content hash (Vite's build), so they are
 * cached for a year; the other files (the icon) are revalidated on every load, so that a new deployment reaches
 * browsers at once, and the page is not stored at all (`no-store`).
 */
function readConsoleFiles(directory: string): ConsoleFiles | null {
  const indexFile = join(directory, 'index.html');
  if (!existsSync(indexFile)) {
    return null;
  }
  const files = new Map<string, ConsoleFile>();
  for (const file of listFiles(directory)) {
    const path = relative(directory, file).split(sep).join('/');
    const contentType = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
    const body = readFileSync(file);
    const resource = path.startsWith('assets/') ? immutable(body, contentType) : revalidated(body, contentType);
    const headers = { ...resource.headers, ...SECURITY_HEADERS };
    files.set(
      `${CONSOLE_PATH}/${path}`,
      COMPRESSED_TYPES.has(extname(file))
        ? { body: resource.body, headers: { ...headers, vary: 'accept-encoding' }, compressed: compress(body) }
        : { body: resource.body, headers },
    );
  }
  // The page is never stored, not even in the back/forward cache: a tab that signed out must not come back showing
  // what it showed signed in (a key's page, a secret just created).
  const page = readFileSync(indexFile);
  const pageHeaders = { 'content-type': CONTENT_TYPES['.html'] ?? 'text/html', 'cache-control': 'no-store' };
  files.set(`${CONSOLE_PATH}/index.html`, { body: page, headers: { ...pageHeaders, ...SECURITY_HEADERS } });
  return { page: { body: page, headers: { ...pageHeaders, ...SECURITY_HEADERS } }, files };
}

function revalidated(body: Buffer, contentType: string): StaticResource {
  return { body, headers: { 'content-type': contentType, 'cache-control': 'no-cache' } };
}

const loaded = new Map<string, ConsoleFiles | null>();

/**
 * Serves the admin console, a single-page app built by `apps/console` (`pnpm build`), read once per process from
 * `directory`. GET and HEAD only: its files at their paths, and the page at `/console` and at every other path under
 * it except `/console/assets/` (the app routes those itself), so that a bookmarked page loads; an unknown file under
 * `/console/assets/` answers a 404 in the API's error shape. Other methods pass on to the API, which answers them.
 * When the console was not built, `/console` and the paths under it answer a 404 in the API's error shape that says
 * how to build it; the API works as usual.
 */
export function adminConsole(directory: string = consoleBuildDirectory()): RequestHandler {
  if (!loaded.has(directory)) {
    loaded.set(directory, readConsoleFiles(directory));
  }
  const built = loaded.get(directory) ?? null;
  return (req: Request, res: Response, next: NextFunction): void => {
    const { path } = req;
    if (
      (req.method !== 'GET' && req.method !== 'HEAD') ||
      (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`))
    ) {
      next();
      return;
    }
    if (built === null) {
      next(
        HttpError.of(
          'not_found_error',
          'the admin console is not built: run `pnpm build` at the repository root, then restart the server',
        ),
      );
      return;
    }
    // Looked up by the exact path, never joined to a folder: nothing outside the build can be named.
    const resource: ConsoleFile | undefined =
      built.files.get(path) ?? (path.startsWith(`${CONSOLE_PATH}/assets/`) ? undefined : built.page);
    if (!resource) {
      // An asset of another build (a page loaded before a deployment) or a typo: a 404 here, not the API's answer to
      // a request without its headers.
      next(HttpError.of('not_found_error', `the admin console has no file at ${path}: reload the page`));
      return;
    }
    const { compressed } = resource;
    const encoding = compressed && chooseEncoding(req.get('accept-encoding'));
    res.status(200).set(resource.headers);
    if (compressed && encoding) {
      res.set('content-encoding', encoding).send(compressed[encoding]);
    } else {
      res.send(resource.body);
    }
  };
}
