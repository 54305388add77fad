/**
 * Writes src/generated/spec-facts.ts: the API facts that code needs at run time (the versions, the limits, the status
 * of each error type, ...), read from the document of each API version (derived from spec/openapi.yaml), so that no
 * package writes them down again. A fact shared by every version must be the same in each. With `--check` it writes
 * nothing and exits 1 when the committed file differs from what the spec gives.
 *
 *   tsx scripts/generate-spec-facts.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadSpec, type OpenApiDocument, specVersions } from '@apikeys/spec';

const OUTPUT = fileURLToPath(new URL('../src/generated/spec-facts.ts', import.meta.url));

type Schema = {
  type?: unknown;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  pattern?: unknown;
  properties?: Record<string, Schema>;
  [extension: `x-${string}`]: unknown;
};
type Parameter = { name: string; in: string; schema: Schema };
type Operation = { operationId?: string; parameters?: ({ $ref: string } | Parameter)[] };

/** A fact the spec must state; the generator stops with the path that is missing or malformed. */
function required<T>(value: T | undefined, path: string, check: (value: T) => boolean = () => true): T {
  if (value === undefined || !check(value)) {
    throw new Error(`spec/openapi.yaml: ${path} is missing or malformed`);
  }
  return value;
}

const isInteger = (value: unknown): value is number => Number.isSafeInteger(value);

function schemaAt(document: OpenApiDocument, name: string): Schema {
  return required((document.components.schemas as Record<string, Schema>)[name], `components.schemas.${name}`);
}

function parameterAt(document: OpenApiDocument, name: string): Parameter {
  return required((document.components.parameters as Record<string, Parameter>)[name], `components.parameters.${name}`);
}

function resolveParameter(document: OpenApiDocument, parameter: { $ref: string } | Parameter): Parameter {
  return '$ref' in parameter
    ? parameterAt(document, parameter.$ref.replace('#/components/parameters/', ''))
    : parameter;
}

/** For each operation, the query parameters whose schema has a default (the validator fills those in). */
function queryDefaults(document: OpenApiDocument): Record<string, string[]> {
  const defaults: Record<string, string[]> = {};
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as Operation[]) {
      if (typeof operation !== 'object' || operation === null || !operation.operationId) {
        continue;
      }
      const names = (operation.parameters ?? [])
        .map((parameter) => resolveParameter(document, parameter))
        .filter((parameter) => parameter.in === 'query' && parameter.schema.default !== undefined)
        .map((parameter) => parameter.name);
      if (names.length > 0) {
        defaults[operation.operationId] = names;
      }
    }
  }
  return defaults;
}

/** For each operation, the first version whose document has it. */
function operationsIntroduced(documents: [string, OpenApiDocument][]): Record<string, string> {
  const introduced: Record<string, string> = {};
  for (const [version, document] of documents) {
    for (const operationId of Object.keys(queryDefaultsAndIds(document))) {
      introduced[operationId] ??= version;
    }
  }
  return introduced;
}

/** Every operationId of a document, with the query parameters that have a default. */
function queryDefaultsAndIds(document: OpenApiDocument): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as Operation[]) {
      if (typeof operation === 'object' && operation !== null && operation.operationId) {
        found[operation.operationId] = queryDefaults(document)[operation.operationId] ?? [];
      }
    }
  }
  return found;
}

/** The facts every version shares, read from one document. */
function sharedFacts(document: OpenApiDocument) {
  const limit = parameterAt(document, 'Limit').schema;
  const listLimit = {
    minimum: required(limit.minimum, 'Limit.schema.minimum', isInteger),
    maximum: required(limit.maximum, 'Limit.schema.maximum', isInteger),
    default: required(limit.default, 'Limit.schema.default', isInteger),
  };

  const name = required(schemaAt(document, 'UpdateApiKeyRequest').properties?.name, 'UpdateApiKeyRequest.name');
  const storedName = required(schemaAt(document, 'ApiKey').properties?.name, 'ApiKey.name');
  const nameLength = {
    minimum: required(name.minLength, 'UpdateApiKeyRequest.name.minLength', isInteger),
    maximum: required(name.maxLength, 'UpdateApiKeyRequest.name.maxLength', isInteger),
  };
  if (storedName.minLength !== nameLength.minimum || storedName.maxLength !== nameLength.maximum) {
    throw new Error('spec/openapi.yaml: ApiKey.name and UpdateApiKeyRequest.name must have the same length bounds');
  }

  const errorType = schemaAt(document, 'ErrorType');
  const errorTypes = required(errorType.enum, 'ErrorType.enum') as string[];
  const statusMap = required(errorType['x-http-status'], 'ErrorType.x-http-status') as Record<string, unknown>;
  const errorStatuses = Object.fromEntries(
    errorTypes.map((type) => [type, required(statusMap[type], `ErrorType.x-http-status.${type}`, isInteger)]),
  );
  const extra = Object.keys(statusMap).filter((type) => !errorTypes.includes(type));
  if (extra.length > 0) {
    throw new Error(`spec/openapi.yaml: ErrorType.x-http-status names unknown types: ${extra.join(', ')}`);
  }
  const maxBodyBytes = required(document['x-max-request-body-bytes'], 'x-max-request-body-bytes', isInteger);
  return { listLimit, nameLength, errorStatuses, maxBodyBytes };
}

/** The change feed's heartbeat interval and unread-bytes bound (`streamKeyChanges`), in the latest version. */
function changeFeedFacts(document: OpenApiDocument) {
  const operation = document.paths['/v1/keys/changes']?.get as Record<string, unknown> | undefined;
  const stream = required(operation, 'GET /v1/keys/changes');
  return {
    heartbeatIntervalMs: required(
      stream['x-heartbeat-interval-ms'],
      'streamKeyChanges.x-heartbeat-interval-ms',
      isInteger,
    ),
    maxUnreadBytes: required(stream['x-max-unread-bytes'], 'streamKeyChanges.x-max-unread-bytes', isInteger),
  };
}

/** The bounds of a gateway's report of key uses (`KeyUsageReport.uses`), in the latest version. */
function usageReportFacts(document: OpenApiDocument) {
  const uses = required(schemaAt(document, 'KeyUsageReport').properties?.uses, 'KeyUsageReport.uses');
  const operation = document.paths['/v1/keys/usage']?.post as Record<string, unknown> | undefined;
  const report = required(operation, 'POST /v1/keys/usage');
  return {
    maxUses: required(uses.maxItems, 'KeyUsageReport.uses.maxItems', isInteger),
    usesPerRequest: required(report['x-uses-per-request'], 'reportKeyUsage.x-uses-per-request', isInteger),
  };
}

/** The grammar and bounds of permissions, permission queries and key metadata, in the latest version. */
function permissionFacts(document: OpenApiDocument) {
  const permissions = schemaAt(document, 'Permissions');
  const name = schemaAt(document, 'PermissionName');
  const query = schemaAt(document, 'PermissionQuery');
  const metadata = schemaAt(document, 'KeyMetadata');
  const isPattern = (value: unknown) => typeof value === 'string' && value.startsWith('^') && value.endsWith('$');
  return {
    permissions: {
      maxItems: required(permissions.maxItems, 'Permissions.maxItems', isInteger),
      nameMaxLength: required(name.maxLength, 'PermissionName.maxLength', isInteger),
      namePattern: required(name.pattern as string | undefined, 'PermissionName.pattern', isPattern),
    },
    query: {
      maxLength: required(query.maxLength, 'PermissionQuery.maxLength', isInteger),
      maxNesting: required(query['x-max-nesting'], 'PermissionQuery.x-max-nesting', isInteger),
    },
    metadata: {
      maxSerializedBytes: required(metadata['x-max-serialized-bytes'], 'KeyMetadata.x-max-serialized-bytes', isInteger),
      maxDepth: required(metadata['x-max-depth'], 'KeyMetadata.x-max-depth', isInteger),
    },
  };
}

/**
 * The bounds and the default of a rotation's grace period (`RotateApiKeyRequest.grace_period_seconds`), or undefined
 * in a version without `rotateApiKey`.
 */
function gracePeriodFacts(document: OpenApiDocument) {
  const request = (document.components.schemas as Record<string, Schema>).RotateApiKeyRequest;
  if (request === undefined) {
    return undefined;
  }
  const path = 'RotateApiKeyRequest.grace_period_seconds';
  const schema = required(request.properties?.grace_period_seconds, path);
  return {
    minimum: required(schema.minimum, `${path}.minimum`, isInteger),
    maximum: required(schema.maximum, `${path}.maximum`, isInteger),
    default: required(schema.default, `${path}.default`, isInteger),
  };
}

/** The latest expiry a request may set (`ExpiresAt.x-latest`), or undefined in a version without expiries. */
function latestExpiryFact(document: OpenApiDocument): string | undefined {
  const schema = (document.components.schemas as Record<string, Schema>).ExpiresAt;
  if (schema === undefined) {
    return undefined;
  }
  return required(
    schema['x-latest'] as string | undefined,
    'ExpiresAt.x-latest',
    (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value),
  );
}

/** The source of the facts module. */
function render(documents: [string, OpenApiDocument][]): string {
  const versions = documents.map(([version]) => version);
  for (const [version, document] of documents) {
    const info = document.info as { version?: string } | undefined;
    required(info?.version, `info.version of ${version}`, (value) => value === version);
    required(
      parameterAt(document, 'VendorVersion').schema.enum,
      `VendorVersion.schema.enum of ${version}`,
      (v) => v.length === 1 && v[0] === version,
    );
  }
  const [first, latest] = [documents[0], documents.at(-1)];
  if (!first || !latest) {
    throw new Error('spec/openapi.yaml: declares no version');
  }
  const shared = sharedFacts(latest[1]);
  for (const [version, document] of documents) {
    if (JSON.stringify(sharedFacts(document)) !== JSON.stringify(shared)) {
      throw new Error(`spec/openapi.yaml: ${version} changes a fact every version shares (limits, error statuses)`);
    }
  }
  const gracePeriod = required(gracePeriodFacts(latest[1]), `RotateApiKeyRequest of ${latest[0]}`);
  for (const [version, document] of documents) {
    const facts = gracePeriodFacts(document);
    if (facts !== undefined && JSON.stringify(facts) !== JSON.stringify(gracePeriod)) {
      throw new Error(`spec/openapi.yaml: ${version} changes the bounds of grace_period_seconds`);
    }
  }
  const latestExpiry = required(latestExpiryFact(latest[1]), `ExpiresAt of ${latest[0]}`);
  for (const [version, document] of documents) {
    const fact = latestExpiryFact(document);
    if (fact !== undefined && fact !== latestExpiry) {
      throw new Error(`spec/openapi.yaml: ${version} changes ExpiresAt.x-latest`);
    }
  }
  const statusesByVersion = Object.fromEntries(
    documents.map(([version, document]) => [version, required(schemaAt(document, 'ApiKeyStatus').enum, 'enum')]),
  );

  const json = (value: unknown) => JSON.stringify(value);
  const defaults: Record<string, string[]> = {};
  for (const [, document] of documents) {
    for (const [operationId, names] of Object.entries(queryDefaultsAndIds(document))) {
      if (names.length > 0) {
        defaults[operationId] = [...new Set([...(defaults[operationId] ?? []), ...names])];
      }
    }
  }
  const defaultLines = Object.entries(defaults)
    .map(([operationId, names]) => `  ${operationId}: ${names.map(json).join(' | ')};\n`)
    .join('');
  return `/**
 * This file was generated from spec/openapi.yaml by scripts/generate-spec-facts.ts.
 * Do not make direct changes to the file.
 */

import type { VersionTypes } from './versions.js';

/** An API version: a value of the \`vendor-version\` header. */
export type ApiVersion = keyof VersionTypes;

type StatusOf<Version extends ApiVersion> = VersionTypes[Version]['components']['schemas']['ApiKeyStatus'];

/** Every API version, oldest first (\`x-api-versions\`); each has a document and types of its own. */
export const API_VERSIONS = ${json(versions)} as const satisfies readonly ApiVersion[];

/** The first API version. The unversioned types (\`paths\`, \`components\`, \`ApiKey\`, ...) describe it. */
export const API_VERSION = ${json(first[0])} satisfies ApiVersion;

/** The latest API version, which a client sends unless told otherwise. */
export const LATEST_API_VERSION = ${json(latest[0])} satisfies ApiVersion;

/** For each operation, the version that introduced it; a request of an earlier version cannot call it. */
export const OPERATION_INTRODUCED_IN = ${json(operationsIntroduced(documents))} as const satisfies Record<
  string,
  ApiVersion
>;

/** Every API key status (\`ApiKeyStatus\`) of the first version, in the order the spec lists them. */
export const API_KEY_STATUSES = ${json(statusesByVersion[first[0]])} as const satisfies readonly StatusOf<
  typeof API_VERSION
>[];

/** Every API key status (\`ApiKeyStatus\`) of each version, in the order the spec lists them. */
export const API_KEY_STATUSES_BY_VERSION = ${json(statusesByVersion)} as const satisfies {
  [Version in ApiVersion]: readonly StatusOf<Version>[];
};

/** The bounds and the default of the \`limit\` query parameter (\`components.parameters.Limit\`). */
export const LIST_LIMIT = ${json(shared.listLimit)} as const;

/** The length of an API key name, in Unicode code points (\`UpdateApiKeyRequest.name\`, \`ApiKey.name\`). */
export const API_KEY_NAME_LENGTH = ${json(shared.nameLength)} as const;

/**
 * The bounds and the default of a rotation's grace period, in seconds (\`RotateApiKeyRequest.grace_period_seconds\`,
 * the same in every version that has \`rotateApiKey\`).
 */
export const ROTATION_GRACE_PERIOD_SECONDS = ${json(gracePeriod)} as const;

/**
 * The latest expiry a create or an update may set, in UTC with microseconds (\`ExpiresAt.x-latest\`, the same in every
 * version that has expiries): every instant up to it is held exactly as microseconds in a JavaScript number.
 */
export const LATEST_EXPIRY = ${json(latestExpiry)};

/** The largest request body the server reads, in bytes (\`x-max-request-body-bytes\`). */
export const MAX_REQUEST_BODY_BYTES = ${shared.maxBodyBytes};

/**
 * The change feed's bounds (\`streamKeyChanges\`): a heartbeat is sent every \`heartbeatIntervalMs\`
 * (\`x-heartbeat-interval-ms\`), and a subscriber with more than \`maxUnreadBytes\` of events unread is dropped
 * (\`x-max-unread-bytes\`).
 */
export const CHANGE_FEED = ${json(changeFeedFacts(latest[1]))} as const;

/**
 * A gateway's report of key uses (\`reportKeyUsage\`): at most \`maxUses\` uses (\`KeyUsageReport.uses.maxItems\`),
 * counted against the caller's rate limit as one request per \`usesPerRequest\` uses (\`x-uses-per-request\`).
 */
export const KEY_USAGE_REPORT = ${json(usageReportFacts(latest[1]))} as const;

/**
 * A key's permissions (\`Permissions\`, \`PermissionName\`): at most \`maxItems\` distinct names, each at most
 * \`nameMaxLength\` characters and matching \`namePattern\`.
 */
export const PERMISSIONS = ${json(permissionFacts(latest[1]).permissions)} as const;

/**
 * A permission requirement (\`PermissionQuery\`): at most \`maxLength\` characters, \`maxNesting\` levels of
 * parentheses.
 */
export const PERMISSION_QUERY = ${json(permissionFacts(latest[1]).query)} as const;

/**
 * A key's metadata (\`KeyMetadata\`): at most \`maxSerializedBytes\` bytes as compact UTF-8 JSON
 * (\`x-max-serialized-bytes\`), at most \`maxDepth\` levels deep, the object itself the first (\`x-max-depth\`).
 */
export const KEY_METADATA = ${json(permissionFacts(latest[1]).metadata)} as const;

/** The HTTP status of each error type (\`ErrorType.x-http-status\`). */
export const ERROR_STATUSES = ${json(shared.errorStatuses)} as const satisfies Record<
  VersionTypes[ApiVersion]['components']['schemas']['ErrorType'],
  number
>;

/**
 * For each operation of any version, the query parameters with a default in the spec, which the request validator
 * fills in.
 */
export interface QueryParameterDefaults {
${defaultLines}}
`;
}

const source = render(specVersions().map((version): [string, OpenApiDocument] => [version, loadSpec(version)]));
if (process.argv.includes('--check')) {
  const current = readFileSync(OUTPUT, 'utf8');
  if (current !== source) {
    process.stderr.write(`${OUTPUT} is out of date with spec/openapi.yaml: run pnpm generate\n`);
    process.exit(1);
  }
} else {
  writeFileSync(OUTPUT, source);
}
