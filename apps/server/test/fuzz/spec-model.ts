import { API_VERSIONS, type ApiVersion } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';

/** A JSON Schema of the spec, with every `$ref` resolved. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  example?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  /** `ExpiresAt`: the latest moment the schema accepts; with it, the moment must also lie in the future. */
  'x-latest'?: string;
}

/** A parameter of an operation. */
export interface ParameterModel {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  allowReserved?: boolean;
  /** An empty value means the parameter is absent (the list filters from 2026-10-21). */
  allowEmptyValue?: boolean;
  description?: string;
  schema: JsonSchema;
  example?: unknown;
}

/** One segment of a path template: a literal, or a path parameter. */
export type Segment = { literal: string } | { parameter: string };

/** A path of the spec and the methods it declares. */
export interface PathModel {
  template: string;
  segments: Segment[];
  /** Upper-case methods with an operation, as an `Allow` header must list them. */
  methods: string[];
}

/** An operation of the spec, as the fuzzer needs it. */
export interface OperationModel {
  operationId: string;
  /** Upper case, as sent on the wire. */
  method: string;
  path: PathModel;
  parameters: ParameterModel[];
  body?: { required: boolean; mediaTypes: string[]; schema: JsonSchema };
  /** Every status the operation documents. */
  statuses: number[];
  /** Declared with `security: []` (the probes): no credential and no version header. */
  public: boolean;
  /** The prefixes of the secrets its security schemes take (`sk-adm-`, and `sk-vfy-` for verification). */
  credentialPrefixes: string[];
}

/** What the fuzzer reads from the document of one API version. */
export interface SpecModel {
  version: ApiVersion;
  operations: OperationModel[];
  paths: PathModel[];
  /** The status of each error type (`ErrorType.x-http-status`). */
  errorStatuses: Record<string, number>;
  /** `x-max-request-body-bytes`. */
  maxBodyBytes: number;
  /** The header that carries the admin key (the `apiKey` security scheme in a header). */
  credentialHeader: string;
  /** Whether a secret may also come as `Authorization: Bearer <secret>` (an `http` `bearer` security scheme). */
  bearer: boolean;
}

/** The model of every API version's document. */
export type SpecModels = Readonly<Record<ApiVersion, SpecModel>>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Node = Record<string, unknown>;

/** Resolves a local `$ref` (`#/components/...`) against the document. */
function follow(document: OpenApiDocument, ref: string): Node {
  let node: unknown = document;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    node = (node as Node)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  if (node === undefined) {
    throw new Error(`unresolved $ref ${ref}`);
  }
  return node as Node;
}

/** A copy of `node` with every `$ref` replaced by what it points to (the spec has no recursive schemas). */
function dereference<T>(document: OpenApiDocument, node: unknown, depth = 0): T {
  if (depth > 64) {
    throw new Error('the spec nests $refs more than 64 deep: recursive schemas are not supported by the fuzzer');
  }
  if (Array.isArray(node)) {
    return node.map((item) => dereference(document, item, depth + 1)) as T;
  }
  if (node === null || typeof node !== 'object') {
    return node as T;
  }
  const { $ref, ...rest } = node as Node;
  const base = typeof $ref === 'string' ? dereference<Node>(document, follow(document, $ref), depth + 1) : {};
  const own = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, dereference(document, value, depth + 1)]),
  );
  return { ...base, ...own } as T;
}

function segmentsOf(template: string): Segment[] {
  return template
    .split('/')
    .slice(1)
    .map((part) => {
      const parameter = /^\{([^}]+)\}$/.exec(part)?.[1];
      return parameter === undefined ? { literal: part } : { parameter };
    });
}

/** The secret prefix (`sk-adm-`, `sk-vfy-`) a security scheme takes: the first one its description names. */
function schemePrefixes(document: OpenApiDocument): Map<string, string> {
  const prefixes = new Map<string, string>();
  for (const [name, scheme] of Object.entries((document.components.securitySchemes ?? {}) as Record<string, Node>)) {
    const prefix = /sk-[a-z]+-/.exec(String(scheme.description ?? ''))?.[0];
    if (!prefix) {
      throw new Error(`the security scheme ${name} names no secret prefix (sk-...-) in its description`);
    }
    prefixes.set(name, prefix);
  }
  return prefixes;
}

/**
 * The body schema, with the values of the body's examples as the `example` of each top-level property that has
 * none: the example says which known values suit a field (`sk-api-...` for the secret that `verifyApiKey` takes).
 */
function bodySchemaWithExamples(schema: JsonSchema, examples: Record<string, { value?: unknown }> | undefined) {
  const properties = { ...(schema.properties ?? {}) };
  for (const { value } of Object.values(examples ?? {})) {
    if (value === null || typeof value !== 'object') {
      continue;
    }
    for (const [name, example] of Object.entries(value)) {
      const property = properties[name];
      if (property && property.example === undefined && typeof example === 'string') {
        properties[name] = { ...property, example };
      }
    }
  }
  return schema.properties ? { ...schema, properties } : schema;
}

/** Reads the operations, paths, parameters, bodies, credentials and error statuses of one version's document. */
export function readSpecModel(
  document: OpenApiDocument,
  version = (document.info as { version: ApiVersion }).version,
): SpecModel {
  const operations: OperationModel[] = [];
  const paths: PathModel[] = [];
  const prefixes = schemePrefixes(document);
  const defaultSecurity = (document.security ?? []) as Record<string, unknown>[];
  for (const [template, rawItem] of Object.entries(document.paths)) {
    const item = dereference<Node>(document, rawItem);
    const path: PathModel = { template, segments: segmentsOf(template), methods: [] };
    paths.push(path);
    const shared = (item.parameters as ParameterModel[] | undefined) ?? [];
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation || typeof operation.operationId !== 'string') {
        continue;
      }
      path.methods.push(method.toUpperCase());
      const own = (operation.parameters as ParameterModel[] | undefined) ?? [];
      // An operation's parameter overrides a path-level one of the same name and location.
      const parameters = [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own].map(
        (p) => ({ ...p, required: p.required === true, schema: p.schema ?? {} }),
      );
      const requestBody = operation.requestBody as
        | {
            required?: boolean;
            content?: Record<string, { schema?: JsonSchema; examples?: Record<string, { value?: unknown }> }>;
          }
        | undefined;
      const content = requestBody?.content ?? {};
      const mediaTypes = Object.keys(content);
      const media = content[mediaTypes[0] as string];
      const security = (operation.security as Record<string, unknown>[] | undefined) ?? defaultSecurity;
      const schemes = security.flatMap((requirement) => Object.keys(requirement));
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        ...(requestBody && mediaTypes.length > 0
          ? {
              body: {
                required: requestBody.required === true,
                mediaTypes,
                schema: bodySchemaWithExamples(media?.schema ?? {}, media?.examples),
              },
            }
          : {}),
        statuses: Object.keys((operation.responses as Node | undefined) ?? {}).map(Number),
        public: security.length === 0,
        credentialPrefixes: [...new Set(schemes.map((scheme) => prefixes.get(scheme) ?? ''))],
      });
    }
  }
  const schemas = document.components.schemas as Record<string, Node>;
  const errorStatuses = (schemas.ErrorType?.['x-http-status'] ?? {}) as Record<string, number>;
  const schemes = Object.values((document.components.securitySchemes ?? {}) as Record<string, Node>);
  const credential = schemes.find((scheme) => scheme.type === 'apiKey' && scheme.in === 'header');
  if (!credential || typeof credential.name !== 'string') {
    throw new Error('the spec declares no apiKey security scheme in a header');
  }
  const maxBodyBytes = document['x-max-request-body-bytes'];
  if (typeof maxBodyBytes !== 'number') {
    throw new Error('the spec declares no x-max-request-body-bytes');
  }
  return {
    version,
    operations,
    paths,
    errorStatuses,
    maxBodyBytes,
    credentialHeader: credential.name.toLowerCase(),
    bearer: schemes.some((scheme) => scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer'),
  };
}

/** The model of every API version, each from its own document. */
export function readSpecModels(): SpecModels {
  return Object.fromEntries(
    API_VERSIONS.map((version) => [version, readSpecModel(loadSpec(version), version)]),
  ) as Record<ApiVersion, SpecModel>;
}

/** The types a schema allows (`type` as a string or a list; none means any). */
export function typesOf(schema: JsonSchema): string[] {
  if (schema.type === undefined) {
    return ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
  }
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}
