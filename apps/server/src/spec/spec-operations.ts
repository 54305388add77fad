import type { OpenApiDocument } from '@apikeys/spec';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The spec's security schemes of verifier keys: an operation that lists one accepts verifier keys. */
const VERIFIER_KEY_SCHEMES = new Set(['VerifierKey', 'VerifierBearer']);

/** One operation of the spec: its method, its path, its operationId, and who may call it. */
export interface SpecOperation {
  method: (typeof HTTP_METHODS)[number];
  path: string;
  operationId: string;
  /** Declared with `security: []`: no credential (the probes). */
  public: boolean;
  /** Its `security` lists a verifier key scheme: verifier keys may call it (admin keys may call every operation). */
  acceptsVerifierKeys: boolean;
  /** Counted against the caller's rate limit: every operation but those declared `x-rate-limited: false`. */
  rateLimited: boolean;
  /** The value of the first example of its JSON request body; undefined for an operation without one. */
  requestExample: unknown;
}

interface OperationObject {
  operationId?: string;
  security?: Record<string, unknown>[];
  'x-rate-limited'?: boolean;
  requestBody?: { content?: Record<string, { examples?: Record<string, { value?: unknown }>; example?: unknown }> };
}

/** The first example of an operation's JSON request body (`examples` or `example`), or undefined. */
function requestExampleOf(operation: OperationObject): unknown {
  const json = operation.requestBody?.content?.['application/json'];
  const [first] = Object.values(json?.examples ?? {});
  return first?.value ?? json?.example;
}

/** A spec path (`/v1/organizations/api_keys/{api_key_id}`) as Express writes it (`.../:api_key_id`). */
export function expressPath(specPath: string): string {
  return specPath.replace(/\{([^}]+)\}/g, ':$1');
}

/** Every operation the spec declares. */
export function specOperations(document: OpenApiDocument): SpecOperation[] {
  const found: SpecOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as OperationObject | undefined;
      if (operation?.operationId) {
        const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
        found.push({
          method,
          path,
          operationId: operation.operationId,
          public: operation.security?.length === 0,
          acceptsVerifierKeys: schemes.some((scheme) => VERIFIER_KEY_SCHEMES.has(scheme)),
          rateLimited: operation['x-rate-limited'] !== false,
          requestExample: requestExampleOf(operation),
        });
      }
    }
  }
  return found;
}
