import { existsSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quotable } from '@apikeys/permissions';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import expressStaticGzip from 'express-static-gzip';
import { HttpError } from '../errors/http-error.js';

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

/** The page, which the app routes every path under `/console` to, except its files. */
const PAGE = 'index.html';

/** Where Vite puts the files it names by their content hash (`build.assetsDir`). */
const ASSETS = 'assets';

/** Where a request for a file went, as an error message may say it: the path if each segment looks like a file name. */
function atPath(path: string): string {
  return path.split('/').every((segment) => segment === '' || quotable(segment, 'file'))
    ? `at ${path}`
    : 'at this path';
}

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

/**
 * How long a browser may keep a file of the build (`file` is the one sent, `.br` and `.gz` copies included). Files
 * under `assets/` are named by their content hash (Vite's build), so they are cached for a year; the others (the
 * icon) are revalidated on every load, so that a new deployment reaches browsers at once; and the page is not stored
 * at all, not even in the back/forward cache: a tab that signed out must not come back showing what it showed signed
 * in (a key's page, a secret just created).
 */
function cacheControlFor(directory: string, file: string): string {
  const path = relative(directory, file).split(sep).join('/');
  if (path.startsWith(`${ASSETS}/`)) {
    return 'public, max-age=31536000, immutable';
  }
  return path === PAGE ? 'no-store' : 'no-cache';
}

/** Whether a path's percent-encoding decodes; express-static-gzip answers one that does not with a text 400. */
function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The build's files, from disk, by express-static-gzip over serve-static: the Brotli or gzip copy the build made
 * of a script or style when the request's `Accept-Encoding` takes it (Brotli first), its own bytes otherwise, with
 * `Vary: Accept-Encoding`, and ETag and Last-Modified for conditional requests. No directory listing, index,
 * redirect or range; whatever it does not find passes on.
 */
function buildFiles(directory: string): RequestHandler {
  const files = expressStaticGzip(directory, {
    enableBrotli: true,
    orderPreference: ['br'],
    index: false,
    serveStatic: {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      // Whole files only: a range past the end would fall through as a missing file.
      acceptRanges: false,
      cacheControl: false,
      setHeaders: (res: ServerResponse, file: string) =>
        res.setHeader('cache-control', cacheControlFor(directory, file)),
    },
  });
  return (req, res, next) => (decodes(req.path) ? files(req, res, next) : next());
}

/** The answer under `/console` of a server whose console was not built. */
function notBuilt(_req: Request, _res: Response, next: NextFunction): void {
  next(
    HttpError.of(
      'not_found_error',
      'the admin console is not built: run `pnpm build` at the repository root, then restart the server',
    ),
  );
}

/**
 * Serves the admin console, a single-page app built by `apps/console` (`pnpm build`) into `directory`. GET and HEAD
 * only: its files at their paths, and the page at `/console` and at every other path under it except
 * `/console/assets/` (the app routes those itself), so that a bookmarked page loads; an unknown file under
 * `/console/assets/` answers a 404 in the API's error shape. Other methods pass on to the API, which answers them.
 * When the console was not built, `/console` and the paths under it answer a 404 in the API's error shape that says
 * how to build it; the API works as usual.
 */
export function adminConsole(directory: string = consoleBuildDirectory()): RequestHandler {
  const router = express.Router({ strict: true, caseSensitive: true });
  const readsOnly: RequestHandler = (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next('router');
      return;
    }
    res.set(SECURITY_HEADERS);
    next();
  };
  if (!existsSync(join(directory, PAGE))) {
    router.use(CONSOLE_PATH, readsOnly, notBuilt);
    return router;
  }
  const files = buildFiles(directory);
  const pageOrNotFound: RequestHandler = (req, res, next) => {
    // What express-static-gzip chose for a file it then did not send must not describe this answer.
    res.removeHeader('content-encoding');
    res.removeHeader('content-type');
    if (req.path.startsWith(`/${ASSETS}/`)) {
      // An asset of another build (a page loaded before a deployment) or a typo: a 404 here, not the API's answer
      // to a request without its headers.
      next(
        HttpError.of(
          'not_found_error',
          `the admin console has no file ${atPath(req.baseUrl + req.path)}: reload the page`,
        ),
      );
      return;
    }
    req.url = `/${PAGE}`;
    files(req, res, next);
  };
  router.use(CONSOLE_PATH, readsOnly, files, pageOrNotFound);
  return router;
}
