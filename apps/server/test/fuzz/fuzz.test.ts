/**
 * The spec-driven fuzzer: thousands of requests derived from the document of every API version (every operation,
 * parameter and body schema, both ways of presenting a credential, admin and verifier keys) and from hostile forms,
 * sent to the real server over HTTP, each held to every invariant of the API (`invariants.ts`, the log checks of
 * `fuzzer.ts`, and the store checks of `change-checks.ts`). What the spec allows is computed by `oracle.ts`.
 *
 * It runs once, on SQLite: the vitest config runs `test/fuzz` only in its `sqlite` project. The invariants are
 * the HTTP layer's; the store's dialects have their own conformance suite.
 *
 * - FUZZ_SEED: the seed. Default: fixed when CI is set, so that CI is deterministic; random otherwise. Printed.
 * - FUZZ_RUNS: the number of requests, shared among the four families (default 12000, which keeps the whole file
 *   within about a minute and a half on two busy cores).
 * - FUZZ_FAMILY and FUZZ_PATH: replay the one request a failure report names (the report prints the command).
 *
 * Each family is its own property, so that a finding in one does not hide the others; fast-check shrinks a
 * failing request to its minimal form, and the report prints it with a curl command and its exact bytes.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSIONS } from '@apikeys/api-types';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFamilies } from './arbitraries.js';
import { createFixture, type Fixture, Fuzzer, FuzzFailure } from './fuzzer.js';
import { abbreviate, type FuzzRequest, replayInstructions, requestJson } from './request.js';
import { readSpecModels } from './spec-model.js';

const CI_SEED = 20_231_106;
const SEED = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : process.env.CI
    ? CI_SEED
    : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 12_000);
const REPLAY = process.env.FUZZ_PATH ? { family: process.env.FUZZ_FAMILY, path: process.env.FUZZ_PATH } : undefined;

/** Outcomes the requests must reach, beyond a success and the refusals of each operation of each version. */
const COVERED_OUTCOMES = [
  /^2026-10-21 verifyApiKey 200 for a verifier key in the header$/,
  /^2026-10-21 verifyApiKey 200 for a verifier key in the bearer$/,
  /^2026-10-21 (?!verifyApiKey)\w+ 403 for a verifier key in the header$/,
  /^2026-10-21 (?!verifyApiKey)\w+ 403 for a verifier key in the bearer$/,
  /^2023-06-01 \w+ 403 for a verifier key in the (header|bearer)$/,
  /^verifyApiKey VALID$/,
  /^verifyApiKey NOT_FOUND$/,
  /^verifyApiKey INACTIVE$/,
  /^verifyApiKey ARCHIVED$/,
  /^verifyApiKey EXPIRED$/,
  /^2026-10-21 createApiKey 200 with an expires_at$/,
  /^2026-10-21 createApiKey 400: expires_at in the past$/,
  /^2026-10-21 createApiKey 400: expires_at later than /,
  /^2026-10-21 updateApiKey 200 with an expires_at$/,
  /^2026-10-21 updateApiKey 400: expires_at in the past$/,
  /^2026-10-21 listAuditEvents 200 with a repeated type$/,
  /^2026-10-21 listAuditEvents 400: cursor (before|after)_id names another kind of the caller's items$/,
  /^2026-10-21 listAuditEvents 400: cursor (before|after)_id names another organization's item$/,
  /^2026-10-21 listAuditEvents 400 refuses query occurred_(after|before)$/,
  /^2026-10-21 listAuditEvents 400 refuses query type$/,
  /^2026-10-21 createApiKey 400 refuses the body breaks its schema \(expires_at\)$/,
  /^2026-10-21 updateApiKey 400 refuses the body breaks its schema \(expires_at\)$/,
  /^2026-10-21 verifyApiKey 400 refuses the body breaks its schema \(key\)$/,
  /^2026-10-21 rotateApiKey 400 refuses the body breaks its schema \(grace_period_seconds\)$/,
  /^2026-10-21 listAuditEvents 400: both cursors$/,
  /^2026-10-21 listApiKeys 400: cursor (before|after)_id names another kind of the caller's items$/,
  /^2026-10-21 getAuditEvent 404: path audit_event_id names no item of the caller's$/,
  /^2026-10-21 createApiKey 400: organization scope without a principal$/,
  /^2026-10-21 updateApiKey 400: an update that revives an expired key$/,
  /^2023-06-01 updateApiKey 400: an update that revives an expired key$/,
  /^2026-10-21 rotateApiKey 400: a rotation of an archived key$/,
  /^2026-10-21 rotateApiKey 400: a rotation of an expired key$/,
];

/** The share of the requests each family gets. */
const SHARES: Record<string, number> = { parameters: 0.3, bodies: 0.3, headers: 0.25, 'methods and paths': 0.15 };

const models = readSpecModels();

/** The report of a failed family: the invariant, the one request and how to replay it, the answer, the log. */
function failureReport(family: string, details: fc.RunDetails<[FuzzRequest]>, fixture: Fixture): string {
  const replay = `FUZZ_SEED=${details.seed} FUZZ_FAMILY='${family}' FUZZ_PATH='${details.counterexamplePath}' npx vitest run test/fuzz -t '${family}'`;
  const header = `The fuzzer found a request that breaks an invariant (family ${family}, after ${details.numRuns} requests, shrunk ${details.numShrinks} times).`;
  const failure = details.errorInstance;
  if (!(failure instanceof FuzzFailure)) {
    return [header, String(failure instanceof Error ? failure.stack : failure), '', `Replay it: ${replay}`].join('\n');
  }
  const file = join(tmpdir(), `apikeys-fuzz-${family.replaceAll(' ', '-')}-${details.seed}.json`);
  writeFileSync(file, requestJson(failure.request));
  return [
    header,
    `Invariant broken: ${failure.invariant}`,
    failure.detail,
    '',
    `Inputs: ${failure.request.labels.join(' | ')}`,
    replayInstructions(failure.request, fixture.bindings, file),
    '',
    'The answer:',
    abbreviate(failure.answer),
    ...(failure.logged.length > 0 ? ['', 'The server logged:', ...failure.logged.map((line) => abbreviate(line))] : []),
    '',
    `Replay it with fast-check: ${replay}`,
  ].join('\n');
}

describe(`the API under spec-driven fuzzing (seed ${SEED}, ${RUNS} requests)`, () => {
  const started = Date.now();
  let server: TestServer;
  let fixture: Fixture;
  let fuzzer: Fuzzer;
  let families: Record<string, fc.Arbitrary<FuzzRequest>>;
  const passed = new Set<string>();
  // Vitest's own handlers are set aside while the fuzzer runs: an exception the server throws outside a request
  // (in a stream callback, say) would otherwise crash a production server; here the fuzzer reports it with the
  // request that caused it, and shrinks that request.
  const setAside = {
    uncaughtException: process.listeners('uncaughtException'),
    unhandledRejection: process.listeners('unhandledRejection'),
  };
  const onUncaught = (error: unknown) => fuzzer.uncaughtException(error);

  beforeAll(async () => {
    // Debug, so that the probes' requests are logged too: every request must be logged under its request-id.
    server = await startTestServer({ logLevel: 'debug' });
    fixture = await createFixture(server);
    fuzzer = await Fuzzer.start(server, models, fixture);
    families = requestFamilies({ models, pools: fixture.pools, credentialsByPrefix: fixture.credentialsByPrefix });
    process.stderr.write(`fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${RUNS} requests\n`);
    process.removeAllListeners('uncaughtException').on('uncaughtException', onUncaught);
    process.removeAllListeners('unhandledRejection').on('unhandledRejection', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught).off('unhandledRejection', onUncaught);
    for (const listener of setAside.uncaughtException) {
      process.on('uncaughtException', listener);
    }
    for (const listener of setAside.unhandledRejection) {
      process.on('unhandledRejection', listener);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(`fuzz: ${fuzzer?.statistics.requests ?? 0} requests in ${seconds} s\n`);
    process.stderr.write(`${fuzzer?.statistics.summary() ?? ''}\n`);
    await server?.close();
  });

  for (const [family, share] of Object.entries(SHARES)) {
    const skipped = REPLAY !== undefined && REPLAY.family !== family;
    it.skipIf(skipped)(`${family}: every answer keeps every invariant`, { timeout: 600_000 }, async () => {
      const arbitrary = families[family];
      if (!arbitrary) {
        throw new Error(`no family ${family}`);
      }
      const details = await fc.check(
        fc.asyncProperty(arbitrary, (request) => fuzzer.send(request)),
        {
          seed: SEED,
          numRuns: REPLAY ? 1 : Math.max(1, Math.round(RUNS * share)),
          ...(REPLAY ? { path: REPLAY.path, endOnFailure: true } : {}),
        },
      );
      if (details.failed) {
        throw new Error(failureReport(family, details, fixture));
      }
      passed.add(family);
    });
  }

  it.skipIf(REPLAY !== undefined)('reaches the success and refusal paths of every operation of every version', () => {
    // Coverage means little when a family stopped at its first failure.
    if (passed.size < Object.keys(SHARES).length) {
      return;
    }
    const { statistics } = fuzzer;
    for (const version of API_VERSIONS) {
      for (const operation of models[version].operations) {
        // Every success the operation documents, and the refusals the fuzzer can always provoke.
        const reachable = operation.statuses.filter((s) => (s >= 200 && s < 300) || [400, 401, 403, 404].includes(s));
        for (const status of reachable) {
          const key = `${operation.public ? '' : `${version} `}${operation.operationId} ${status}`;
          expect(statistics.count(key), key).toBeGreaterThan(0);
        }
        for (const placement of operation.public ? [] : ['header', 'bearer']) {
          const [success] = operation.statuses.filter((s) => s >= 200 && s < 300);
          const key = `${version} ${operation.operationId} ${success} for a admin key in the ${placement}`;
          expect(statistics.count(key), key).toBeGreaterThan(0);
        }
      }
    }
    for (const outcome of COVERED_OUTCOMES) {
      expect(statistics.matching(outcome), String(outcome)).toBeGreaterThan(0);
    }
    expect(statistics.count('(no operation) 404')).toBeGreaterThan(0);
    expect(statistics.count('(no operation) 405')).toBeGreaterThan(0);
  });
});
