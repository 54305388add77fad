import { readFileSync } from 'node:fs';
import { LATEST_API_VERSION, type OperationIdOf } from '@apikeys/api-types';
import { documentedStatuses, specOperationIds } from '@apikeys/server/testing';
import { describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/health/readiness.js';
import { versionHandlers } from '../../src/http/operations/index.js';
import type { Services } from '../../src/http/operations/services.js';

type Latest = typeof LATEST_API_VERSION;

/**
 * What operations-complete.test.ts checks for the first version, for the latest: the (operationId, status) pairs its
 * contract tests exercise, each a `describe('<status> ...')` block in the operation's test file. Operations both
 * versions share are covered there; those the latest version introduced are listed here.
 */
const INTRODUCED: Partial<Record<OperationIdOf<Latest>, readonly number[]>> = {
  createApiKey: [200, 400, 401, 403, 413, 415, 429, 500, 503],
  rotateApiKey: [200, 400, 401, 403, 404, 413, 415, 429, 500, 503],
  listAuditEvents: [200, 400, 401, 403, 429, 500, 503],
  getAuditEvent: [200, 400, 401, 403, 404, 429, 500, 503],
  verifyApiKey: [200, 400, 401, 403, 413, 415, 429, 500, 503],
};

const kebabCase = (operationId: string) => operationId.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

describe('the contract tests cover the latest version', () => {
  const latest = specOperationIds(LATEST_API_VERSION);
  const first = specOperationIds();

  it('has a handler for every operation of every version, and none for an operation a version lacks', () => {
    const handlers = versionHandlers({} as Services, {} as Readiness);

    expect(Object.keys(handlers[LATEST_API_VERSION]).sort()).toEqual([...latest].sort());
    for (const [version, byOperation] of Object.entries(handlers)) {
      expect(Object.keys(byOperation).sort()).toEqual([...specOperationIds(version as Latest)].sort());
    }
  });

  it('lists exactly the operations the latest version introduced', () => {
    expect(Object.keys(INTRODUCED).sort()).toEqual(latest.filter((id) => !first.includes(id)).sort());
  });

  it.each(Object.entries(INTRODUCED))(
    'covers every documented status of %s, each in a describe block',
    (id, statuses) => {
      expect([...(statuses ?? [])].sort()).toEqual(
        documentedStatuses(id as OperationIdOf<Latest>, LATEST_API_VERSION).sort(),
      );
      const source = readFileSync(new URL(`./${kebabCase(id)}.test.ts`, import.meta.url), 'utf8');
      const described = [...source.matchAll(/describe\('(\d{3}) /g)].map((match) => Number(match[1]));

      expect(source).toContain(`describe('${id}'`);
      expect([...new Set(described)].sort()).toEqual([...(statuses ?? [])].sort());
    },
  );
});
