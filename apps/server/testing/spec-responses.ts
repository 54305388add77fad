import type { OperationId } from '@apikeys/api-types';
import { loadSpec } from '@apikeys/spec';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// An independent validator (Ajv, not the server's express-openapi-validator), so that a response the server lets
// through is still checked against the spec.
const document = loadSpec();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// The whole document is one schema resource, so `#/components/...` references resolve inside it.
ajv.addSchema({ ...document, $id: 'spec' });

type ResponseObject = { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> };

function findOperation(operationId: OperationId): Record<string, unknown> {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if ((operation as { operationId?: string }).operationId === operationId) {
        return operation as Record<string, unknown>;
      }
    }
  }
  throw new Error(`no operation ${operationId} in the spec`);
}

function resolveResponse(response: ResponseObject): ResponseObject {
  if (!response.$ref) {
    return response;
  }
  const name = response.$ref.replace('#/components/responses/', '');
  return (document.components.responses as Record<string, ResponseObject>)[name] as ResponseObject;
}

/** The statuses the spec documents for an operation. */
export function documentedStatuses(operationId: OperationId): number[] {
  return Object.keys(findOperation(operationId).responses as object).map(Number);
}

/** The ids of every operation in the spec. */
export function specOperationIds(): string[] {
  return Object.values(document.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) => {
      const id = (operation as { operationId?: string }).operationId;
      return id ? [id] : [];
    }),
  );
}

function schemaRefFor(operationId: OperationId | undefined, status: number): string {
  if (operationId === undefined) {
    return 'spec#/components/schemas/ErrorResponse';
  }
  const responses = findOperation(operationId).responses as Record<string, ResponseObject>;
  const response = responses[String(status)];
  if (!response) {
    throw new Error(`${operationId} does not document status ${status}`);
  }
  const schema = resolveResponse(response).content?.['application/json']?.schema;
  if (!schema?.$ref) {
    throw new Error(`${operationId} ${status} has no JSON schema reference`);
  }
  return `spec${schema.$ref}`;
}

/**
 * Validates a body against the schema the spec declares for (operation, status), or against `ErrorResponse` when
 * there is no operation; returns the problems, none when it is valid.
 */
export function specErrors(operationId: OperationId | undefined, status: number, body: unknown): string[] {
  const ref = schemaRefFor(operationId, status);
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
