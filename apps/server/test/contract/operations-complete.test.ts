import { readFileSync } from 'node:fs';
import { type AnyOperationId, API_VERSIONS, type ApiVersion } from '@apikeys/api-types';
import { documentedStatuses, specOperationIds } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import { describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/health/readiness.js';
import { versionHandlers } from '../../src/http/operations/index.js';
import type { Services } from '../../src/http/operations/services.js';

/**
 * The one completeness test of the contract tests, for every API version. Every documented status of every operation
 * has a `describe` block in the operation's test file (named after the operationId in kebab case) whose title starts
 * with the status and ends with the versions it covers:
 *
 * - `describe('404 not_found_error [2026-10-21]', ...)`: that version;
 * - `describe.each(API_VERSIONS)('401 authentication_error [%s]', ...)`: each version, with the same cases (a literal
 *   list of versions may stand for `API_VERSIONS`);
 * - `describe('200 alive [every version]', ...)`: an operation that takes no version header, whose requests are the
 *   same in every version.
 *
 * Every operation that takes a body documents its 415 and runs the shared refusals of refusals.ts.
 *
 * A new version, a new operation or a new status fails this file until its tests exist.
 */

const kebabCase = (operationId: string) => operationId.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

const testSource = (operationId: string) =>
  readFileSync(new URL(`./${kebabCase(operationId)}.test.ts`, import.meta.url), 'utf8');

/** Whether the operation reads `vendor-version` in some version's document. */
function takesVersionHeader(operationId: string): boolean {
  return API_VERSIONS.some((version) => {
    const document = loadSpec(version);
    const parameters = document.components.parameters as Record<string, { name?: string }>;
    return Object.values(document.paths).some((item) =>
      Object.values(item).some((operation) => {
        const { operationId: id, parameters: list = [] } = operation as { operationId?: string; parameters?: [] };
        return (
          id === operationId &&
          list.some(({ $ref, name }: { $ref?: string; name?: string }) => {
            const parameter = $ref ? parameters[$ref.split('/').at(-1) ?? ''] : { name };
            return parameter?.name === 'vendor-version';
          })
        );
      }),
    );
  });
}

/** The versions a `describe` claims: from its title's `[...]`, and for `[%s]` from what `describe.each` runs over. */
function claimedVersions(operationId: string, title: string, each: string | undefined): readonly string[] {
  const named = /\[([^\]]+)\]$/.exec(title)?.[1];
  if (named === '%s' && each !== undefined) {
    return each.trim() === 'API_VERSIONS'
      ? API_VERSIONS
      : [...each.matchAll(/'(\d{4}-\d{2}-\d{2})'/g)].map((m) => m[1] ?? '');
  }
  if (named === 'every version' && !takesVersionHeader(operationId)) {
    return API_VERSIONS;
  }
  return named && /^\d{4}-\d{2}-\d{2}$/.test(named) ? [named] : [`no version named in '${title}'`];
}

/** The status `describe` blocks of a test file: each block's status and the versions it claims. */
function statusBlocks(operationId: string, source: string): { status: number; versions: readonly string[] }[] {
  return [...source.matchAll(/describe(?:\.each\(([^)]*)\))?\(\s*'(\d{3}) ([^']*)'/g)].map(
    ([, each, status, title = '']) => ({
      status: Number(status),
      versions: claimedVersions(operationId, title, each),
    }),
  );
}

/** The statuses the `describe` blocks of a test file claim to cover in `version`. */
function coveredStatuses(operationId: string, source: string, version: ApiVersion): number[] {
  const statuses = statusBlocks(operationId, source).flatMap(({ status, versions }) =>
    versions.includes(version) ? [status] : [],
  );
  return [...new Set(statuses)].sort();
}

/** The statuses the document of `version` declares for an operation; none when the version has no such operation. */
function documentedStatusesIn(operationId: string, version: ApiVersion): number[] {
  return specOperationIds(version).includes(operationId)
    ? [...documentedStatuses(operationId as AnyOperationId, version)].sort()
    : [];
}

/** Every operation of `version` that takes a request body, optional or required. */
function operationsWithBody(version: ApiVersion): string[] {
  return Object.values(loadSpec(version).paths).flatMap((item) =>
    Object.values(item as Record<string, { operationId?: string; requestBody?: unknown }>).flatMap((operation) =>
      operation.operationId && operation.requestBody ? [operation.operationId] : [],
    ),
  );
}

/** The shared refusals (refusals.ts) that the contract test of every operation with a body runs. */
const SHARED_REFUSALS = [
  'refusesUnauthenticated',
  'refusesRegularKeys',
  'refusesVerifierKeys',
  'refusesLargeBodies',
  'refusesOtherMediaTypes',
  'refusesOverBudget',
  'answersInternalErrors',
  'answersUnavailable',
] as const;

/**
 * The shared refusals an operation cannot run, and why. verifyApiKey and reportKeyUsage are the verifier keys' own
 * operations, and their budget is one of failed authentications, not of the admin key; their own tests check both.
 */
const NOT_SHARED: Partial<Record<string, readonly (typeof SHARED_REFUSALS)[number][]>> = {
  verifyApiKey: ['refusesVerifierKeys', 'refusesOverBudget'],
  reportKeyUsage: ['refusesVerifierKeys', 'refusesOverBudget'],
};

const operationIds = [...new Set(API_VERSIONS.flatMap((version) => specOperationIds(version)))];

it('finds the operations that take a body', () => {
  expect(new Set(API_VERSIONS.flatMap(operationsWithBody))).toEqual(
    new Set(['createApiKey', 'updateApiKey', 'rotateApiKey', 'verifyApiKey', 'reportKeyUsage']),
  );
});

it.each(operationIds)('%s: every status describe names the versions it covers', (operationId) => {
  const versions = statusBlocks(operationId, testSource(operationId)).flatMap((block) => block.versions);

  expect(versions.filter((version) => !(API_VERSIONS as readonly string[]).includes(version))).toEqual([]);
});

describe.each(API_VERSIONS)('the contract tests cover API version %s', (version) => {
  it('a handler for every operation of its document, and none for another', () => {
    // Building the handlers only closes over the services, so no store is needed.
    const handlers = versionHandlers({} as Services, {} as Readiness);

    expect(Object.keys(handlers[version]).sort()).toEqual([...specOperationIds(version)].sort());
  });

  it.each(operationIds)('%s: a describe per documented status of the version, and none for another', (operationId) => {
    const source = testSource(operationId);

    expect(source).toContain(`describe('${operationId}'`);
    expect(coveredStatuses(operationId, source, version)).toEqual(documentedStatusesIn(operationId, version));
  });

  it.each(operationsWithBody(version))('%s documents its 415', (operationId) => {
    expect(documentedStatuses(operationId as AnyOperationId, version)).toContain(415);
  });

  it.each(operationsWithBody(version))('%s runs the shared refusals of refusals.ts', (operationId) => {
    const source = testSource(operationId);
    const expected = SHARED_REFUSALS.filter((refusal) => !NOT_SHARED[operationId]?.includes(refusal));

    expect(source).toMatch(/describe(?:\.each\([^)]*\))?\('415 [\s\S]*refusesOtherMediaTypes\(/);
    expect(expected.filter((refusal) => !source.includes(`${refusal}(`))).toEqual([]);
  });
});
