import { readFileSync } from 'node:fs';
import { type AnyOperationId, API_VERSIONS } from '@apikeys/api-types';
import { documentedStatuses } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import { describe, expect, it } from 'vitest';

const kebabCase = (operationId: string) => operationId.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** Every operation of every version that takes a request body, optional or required, with its version. */
const operationsWithBody = API_VERSIONS.flatMap((version) =>
  Object.values(loadSpec(version).paths).flatMap((item) =>
    Object.values(item as Record<string, { operationId?: string; requestBody?: unknown }>).flatMap((operation) =>
      operation.operationId && operation.requestBody ? [{ version, operationId: operation.operationId }] : [],
    ),
  ),
);

describe('every operation that takes a body refuses one that is not JSON', () => {
  it('finds the operations that take a body', () => {
    expect(new Set(operationsWithBody.map(({ operationId }) => operationId))).toEqual(
      new Set(['createApiKey', 'updateApiKey', 'rotateApiKey', 'verifyApiKey']),
    );
  });

  it.each(operationsWithBody)('$operationId documents its 415 in $version', ({ version, operationId }) => {
    expect(documentedStatuses(operationId as AnyOperationId, version)).toContain(415);
  });

  it.each([...new Set(operationsWithBody.map(({ operationId }) => operationId))])(
    "%s's contract test runs the shared media type refusals (refusals.ts)",
    (operationId) => {
      const source = readFileSync(new URL(`./${kebabCase(operationId)}.test.ts`, import.meta.url), 'utf8');

      expect(source).toMatch(/describe(?:\.each\([^)]*\))?\('415 [\s\S]*refusesOtherMediaTypes\(/);
    },
  );
});
