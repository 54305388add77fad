import { readFileSync } from 'node:fs';
import { type AnyOperationId, API_VERSIONS, type ApiVersion } from '@apikeys/api-types';
import { documentedStatuses, specOperationIds } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import { describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/health/readiness.js';
import { versionHandlers } from '../../src/http/operations/index.js';
import type { Services } from '../../src/http/operations/services.js';

/**
 * Every documented status of every operation of every API version has a `describe` block in the operation's test file
 * (named after the operationId in kebab case) whose title starts with the status and ends with the versions it covers:
 *
 * - `describe('404 not_found_error [2026-10-21]', ...)`: that version;
 * - `describe.each(API_VERSIONS)('401 authentication_error [%s]', ...)`: each version, with the same cases (a literal
 *   list of versions may stand for `API_VERSIONS`);
 * - `describe('200 alive [every version]', ...)`: an operation that takes no version header, whose requests are the
 *   same in every version.
 *
 * A new version, a new operation or a new status fails this file until its tests exist.
 */

const kebabCase = (operationId: string) => operationId.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

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

/** The (version, status) pairs the `describe` blocks of a test file claim to cover, as `<version> <status>`. */
function coveredPairs(operationId: string, source: string): string[] {
  const pairs = [...source.matchAll(/describe(?:\.each\(([^)]*)\))?\(\s*'(\d{3}) ([^']*)'/g)].flatMap(
    ([, each, status, title = '']) =>
      claimedVersions(operationId, title, each).map((version) => `${version} ${status}`),
  );
  return [...new Set(pairs)].sort();
}

/** The (version, status) pairs the documents of every version declare for an operation. */
function documentedPairs(operationId: string): string[] {
  return API_VERSIONS.flatMap((version: ApiVersion) =>
    specOperationIds(version).includes(operationId)
      ? documentedStatuses(operationId as AnyOperationId, version).map((status) => `${version} ${status}`)
      : [],
  ).sort();
}

describe('the contract tests cover every documented status of every API version', () => {
  it.each(API_VERSIONS)('%s: a handler for every operation of its document, and none for another', (version) => {
    // Building the handlers only closes over the services, so no store is needed.
    const handlers = versionHandlers({} as Services, {} as Readiness);

    expect(Object.keys(handlers[version]).sort()).toEqual([...specOperationIds(version)].sort());
  });

  const operationIds = [...new Set(API_VERSIONS.flatMap((version) => specOperationIds(version)))];

  it.each(operationIds)('%s: a describe per documented status of each version, and none for another', (operationId) => {
    const source = readFileSync(new URL(`./${kebabCase(operationId)}.test.ts`, import.meta.url), 'utf8');

    expect(source).toContain(`describe('${operationId}'`);
    expect(coveredPairs(operationId, source)).toEqual(documentedPairs(operationId));
  });
});
