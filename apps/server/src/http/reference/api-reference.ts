import { readFileSync } from 'node:fs';
import { loadSpec, specPath } from '@apikeys/spec';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { docsInitializer } from './docs-initializer.js';
import { DOCS_CONTENT_SECURITY_POLICY, docsPage } from './docs-page.js';
import { fingerprintedPath, immutable, type StaticResource, shortLived } from './static-resource.js';
import { readSwaggerUiFiles } from './swagger-ui-files.js';

/** Where the API reference lives. These paths are not operations of the spec: they serve it. */
const REFERENCE_PATHS = {
  page: '/docs',
  assets: '/docs/assets',
  specYaml: '/openapi.yaml',
  specJson: '/openapi.json',
} as const;

const JAVASCRIPT = 'text/javascript; charset=utf-8';

let loaded: ReadonlyMap<string, StaticResource> | undefined;

/** The reference's responses, built when the first app is, and shared by every app of the process. */
function referenceResources(): ReadonlyMap<string, StaticResource> {
  loaded ??= buildResources();
  return loaded;
}

/** Every response of the reference by path: the page, its fingerprinted assets and the spec in both forms. */
function buildResources(): ReadonlyMap<string, StaticResource> {
  const byPath = new Map<string, StaticResource>();
  const asset = (name: string, body: Buffer | string, contentType: string): string => {
    const path = fingerprintedPath(REFERENCE_PATHS.assets, name, body);
    byPath.set(path, immutable(body, contentType));
    return path;
  };
  const document = loadSpec();
  const swaggerUi = readSwaggerUiFiles();
  const page = docsPage((document.info as { title: string }).title, {
    stylesheet: asset('swagger-ui.css', swaggerUi.stylesheet, 'text/css; charset=utf-8'),
    icon: asset('favicon-32x32.png', swaggerUi.icon, 'image/png'),
    swaggerUi: asset('swagger-ui-bundle.js', swaggerUi.script, JAVASCRIPT),
    initializer: asset('docs-initializer.js', docsInitializer(REFERENCE_PATHS.specJson), JAVASCRIPT),
  });
  byPath.set(
    REFERENCE_PATHS.page,
    shortLived(page, 'text/html; charset=utf-8', {
      'content-security-policy': DOCS_CONTENT_SECURITY_POLICY,
      'referrer-policy': 'no-referrer',
    }),
  );
  byPath.set(REFERENCE_PATHS.specYaml, shortLived(readFileSync(specPath), 'application/yaml'));
  byPath.set(REFERENCE_PATHS.specJson, shortLived(JSON.stringify(document), 'application/json; charset=utf-8'));
  return byPath;
}

/**
 * Serves the API reference: `GET /docs` renders spec/openapi.yaml with Swagger UI, entirely from this server's own
 * files, and `/openapi.yaml` and `/openapi.json` serve the spec itself. The files are read once per process.
 * It answers GET and HEAD on its exact paths only (`/docs/` redirects to `/docs`); every other request passes on to
 * the API, which answers it in the API's error shape.
 */
export function apiReference(): RequestHandler {
  const resources = referenceResources();
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    if (req.path === `${REFERENCE_PATHS.page}/`) {
      res.status(301).location(REFERENCE_PATHS.page).end();
      return;
    }
    const resource = resources.get(req.path);
    if (!resource) {
      next();
      return;
    }
    res.status(200).set(resource.headers).send(resource.body);
  };
}
