import type { OperationId } from '@apikeys/api-types';
import { loadSpec } from '@apikeys/spec';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

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

/** Validates a body against the schema the spec declares for (operation, status), or the error schema. */
export function specErrors(operationId: OperationId | undefined, status: number, body: unknown): string[] {
  const validate =
    ajv.getSchema(schemaRefFor(operationId, status)) ?? ajv.compile({ $ref: schemaRefFor(operationId, status) });
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/**
 * Asserts that a response is what the spec promises: a documented status (for an operation), a JSON content type,
 * a `request-id` header, and a body that validates against the declared schema. Pass no operationId for
 * responses outside any operation (unknown paths, unsupported methods), which must still be ErrorResponses.
 */
export function expectMatchesSpec(
  operationId: OperationId | undefined,
  response: { status: number; headers: Headers },
  body: unknown,
): void {
  if (operationId !== undefined) {
    expect(documentedStatuses(operationId), `${operationId} documents ${response.status}`).toContain(response.status);
  }
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9]{24}$/);
  expect(specErrors(operationId, response.status, body)).toEqual([]);
  if (response.status >= 400) {
    expect((body as { request_id?: string }).request_id).toBe(response.headers.get('request-id'));
  }
}
