import { readFileSync } from 'node:fs';
import type { OperationId } from '@apikeys/api-types';
import { documentedStatuses, specOperationIds } from '@apikeys/server/testing';
import { describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/health/readiness.js';
import { operationHandlers } from '../../src/http/operations/index.js';
import type { Services } from '../../src/http/operations/services.js';

/**
 * The (operationId, status) pairs the contract tests exercise. Each pair has a `describe('<status> ...')` block in
 * the operation's test file, named after the operationId in kebab case. Adding a status or an operation to the
 * spec fails this file until a test for it exists and is listed here.
 */
const COVERED: Record<OperationId, readonly number[]> = {
  listApiKeys: [200, 400, 401, 403, 429, 500, 503],
  getApiKey: [200, 400, 401, 403, 404, 429, 500, 503],
  updateApiKey: [200, 400, 401, 403, 404, 413, 415, 429, 500, 503],
  getHealth: [200, 400],
  getReadiness: [200, 400, 503],
};

const kebabCase = (operationId: string) => operationId.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

function pairs(statusesOf: (operationId: OperationId) => readonly number[], operationIds: readonly string[]) {
  return operationIds
    .flatMap((operationId) => statusesOf(operationId as OperationId).map((status) => `${operationId} ${status}`))
    .sort();
}

describe('the contract tests cover the whole spec', () => {
  it('has a handler for every operationId in the spec, and none for an operation the spec lacks', () => {
    // Building the handlers only closes over the service, so no store is needed.
    const handlers = operationHandlers({} as Services, {} as Readiness);

    expect(Object.keys(handlers).sort()).toEqual([...specOperationIds()].sort());
  });

  it('lists exactly the operations of the spec', () => {
    expect(Object.keys(COVERED).sort()).toEqual([...specOperationIds()].sort());
  });

  it('covers every documented status of every operation, and no undocumented one', () => {
    const operationIds = specOperationIds();

    expect(pairs((operationId) => COVERED[operationId] ?? [], operationIds)).toEqual(
      pairs(documentedStatuses, operationIds),
    );
  });

  it.each(Object.entries(COVERED))(
    'has a describe block per covered status of %s in its test file',
    (operationId, statuses) => {
      const file = new URL(`./${kebabCase(operationId)}.test.ts`, import.meta.url);
      const source = readFileSync(file, 'utf8');
      const described = [...source.matchAll(/describe\('(\d{3}) /g)].map((match) => Number(match[1]));

      expect(source).toContain(`describe('${operationId}'`);
      expect([...new Set(described)].sort()).toEqual([...statuses].sort());
    },
  );
});
