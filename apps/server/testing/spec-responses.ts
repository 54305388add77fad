import { type AnyOperationId, API_VERSION, type ApiVersion } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** One version's document, with an independent validator of it. */
interface VersionValidator {
  document: OpenApiDocument;
  ajv: Ajv2020;
}

const validators = new Map<ApiVersion, VersionValidator>();

// An independent validator (Ajv, not the server's express-openapi-validator), so that a response the server lets
// through is still checked against the document of its version.
function validatorOf(version: ApiVersion): VersionValidator {
  let validator = validators.get(version);
  if (!validator) {
    const document = loadSpec(version);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    // The whole document is one schema resource, so `#/components/...` references resolve inside it.
    ajv.addSchema({ ...document, $id: 'spec' });
    validator = { document, ajv };
    validators.set(version, validator);
  }
  return validator;
}

type OperationId = AnyOperationId;

type ResponseObject = { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> };

function findOperation(operationId: OperationId, version: ApiVersion): Record<string, unknown> {
  const { document } = validatorOf(version);
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if ((operation as { operationId?: string }).operationId === operationId) {
        return operation as Record<string, unknown>;
      }
    }
  }
  throw new Error(`no operation ${operationId} in the document of ${version}`);
}

function resolveResponse(response: ResponseObject, document: OpenApiDocument): ResponseObject {
  if (!response.$ref) {
    return response;
  }
  const name = response.$ref.replace('#/components/responses/', '');
  return (document.components.responses as Record<string, ResponseObject>)[name] as ResponseObject;
}

/** The statuses the spec documents for an operation (in the first version, unless another is given). */
export function documentedStatuses(operationId: OperationId, version: ApiVersion = API_VERSION): number[] {
  return Object.keys(findOperation(operationId, version).responses as object).map(Number);
}

/** The ids of every operation in the document of a version (the first, unless another is given). */
export function specOperationIds(version: ApiVersion = API_VERSION): string[] {
  return Object.values(validatorOf(version).document.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) => {
      const id = (operation as { operationId?: string }).operationId;
      return id ? [id] : [];
    }),
  );
}

function schemaRefFor(operationId: OperationId | undefined, status: number, version: ApiVersion): string {
  if (operationId === undefined) {
    return 'spec#/components/schemas/ErrorResponse';
  }
  const responses = findOperation(operationId, version).responses as Record<string, ResponseObject>;
  const response = responses[String(status)];
  if (!response) {
    throw new Error(`${operationId} does not document status ${status}`);
  }
  const schema = resolveResponse(response, validatorOf(version).document).content?.['application/json']?.schema;
  if (!schema?.$ref) {
    throw new Error(`${operationId} ${status} has no JSON schema reference`);
  }
  return `spec${schema.$ref}`;
}

/**
 * Validates a body against the schema the document of `version` (the first, unless another is given) declares for
 * (operation, status), or against `ErrorResponse` when there is no operation; returns the problems, none when it is
 * valid.
 */
export function specErrors(
  operationId: OperationId | undefined,
  status: number,
  body: unknown,
  version: ApiVersion = API_VERSION,
): string[] {
  const ref = schemaRefFor(operationId, status, version);
  const { ajv } = validatorOf(version);
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** Validates `value` against a schema of the document of `version` by name; returns the problems, none when valid. */
export function schemaErrors(schemaName: string, value: unknown, version: ApiVersion = API_VERSION): string[] {
  const ref = `spec#/components/schemas/${schemaName}`;
  const { ajv } = validatorOf(version);
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
