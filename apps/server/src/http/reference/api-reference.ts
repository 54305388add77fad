import { API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import { versionDocumentText } from '@apikeys/spec';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { VersionDocuments } from '../../spec/version-documents.js';
import { docsInitializer } from './docs-initializer.js';
import { DOCS_CONTENT_SECURITY_POLICY, DOCS_PAGE_STYLESHEET, docsPage } from './docs-page.js';
import { fingerprintedPath, immutable, type StaticResource, shortLived } from './static-resource.js';
import { readSwaggerUiFiles } from './swagger-ui-files.js';

/**
 * Where the API reference lives. These paths are not operations of the spec: they serve it. `/openapi.yaml` and
 * `/openapi.json` are the latest version's document; `/openapi/<version>.yaml` and `.json` are each version's.
 */
const REFERENCE_PATHS = {
  page: '/docs',
  assets: '/docs/assets',
  specYaml: '/openapi.yaml',
  specJson: '/openapi.json',
  versionYaml: (version: ApiVersion) => `/openapi/${version}.yaml`,
  versionJson: (version: ApiVersion) => `/openapi/${version}.json`,
} as const;

const JAVASCRIPT = 'text/javascript; charset=utf-8';

const loaded = new WeakMap<VersionDocuments, ReadonlyMap<string, StaticResource>>();

/** The reference's responses, built when the first app is, and shared by every app of the process. */
function referenceResources(documents: VersionDocuments): ReadonlyMap<string, StaticResource> {
  let resources = loaded.get(documents);
  if (!resources) {
    resources = buildResources(documents);
    loaded.set(documents, resources);
  }
  return resources;
}

/** Every response of the reference by path: the page, its fingerprinted assets and each document in both forms. */
function buildResources(documents: VersionDocuments): ReadonlyMap<string, StaticResource> {
  const byPath = new Map<string, StaticResource>();
  const asset = (name: string, body: Buffer | string, contentType: string): string => {
    const path = fingerprintedPath(REFERENCE_PATHS.assets, name, body);
    byPath.set(path, immutable(body, contentType));
    return path;
  };
  const latest = documents[LATEST_API_VERSION];
  const swaggerUi = readSwaggerUiFiles();
  // The latest version first: the page opens it, and offers the others in its selector.
  const offered = [...API_VERSIONS].reverse().map((version) => ({
    name: version === LATEST_API_VERSION ? `${version} (latest)` : version,
    url: REFERENCE_PATHS.versionJson(version),
  }));
  const page = docsPage((latest.info as { title: string }).title, {
    stylesheet: asset('swagger-ui.css', swaggerUi.stylesheet, 'text/css; charset=utf-8'),
    icon: asset('favicon-32x32.png', swaggerUi.icon, 'image/png'),
    swaggerUi: asset('swagger-ui-bundle.js', swaggerUi.script, JAVASCRIPT),
    initializer: asset('docs-initializer.js', docsInitializer(offered), JAVASCRIPT),
    pageStylesheet: asset('docs.css', DOCS_PAGE_STYLESHEET, 'text/css; charset=utf-8'),
  });
  byPath.set(
    REFERENCE_PATHS.page,
    shortLived(page, 'text/html; charset=utf-8', {
      'content-security-policy': DOCS_CONTENT_SECURITY_POLICY,
      'referrer-policy': 'no-referrer',
    }),
  );
  for (const version of API_VERSIONS) {
    const yaml = shortLived(versionDocumentText(version), 'application/yaml');
    const json = shortLived(JSON.stringify(documents[version]), 'application/json; charset=utf-8');
    byPath.set(REFERENCE_PATHS.versionYaml(version), yaml);
    byPath.set(REFERENCE_PATHS.versionJson(version), json);
    if (version === LATEST_API_VERSION) {
      byPath.set(REFERENCE_PATHS.specYaml, yaml);
      byPath.set(REFERENCE_PATHS.specJson, json);
    }
  }
  return byPath;
}

/**
 * Serves the API reference: `GET /docs` renders each version's document with Swagger UI (a selector switches
 * versions), entirely from this server's own files, and `/openapi.yaml`, `/openapi.json` and
 * `/openapi/<version>.yaml|json` serve the documents themselves. The files are read once per process.
 * It answers GET and HEAD on its exact paths only (`/docs/` redirects to `/docs`); every other request passes on to
 * the API, which answers it in the API's error shape.
 */
export function apiReference(documents: VersionDocuments): RequestHandler {
  const resources = referenceResources(documents);
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
