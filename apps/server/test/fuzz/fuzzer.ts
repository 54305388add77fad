/**
 * The fuzzer's harness: `send` sends one request to the real server over HTTP and checks every invariant: the
 * answer's (`invariants.ts`), the log's, and the store's (`change-checks.ts`).
 */
import type { TestServer } from '@apikeys/server/testing';
import { judgeChanges } from './change-checks.js';
import { type Answer, exchange, headerOf, type NoAnswer } from './exchange.js';
import type { Fixture } from './fixture.js';
import { InvariantError } from './invariant-error.js';
import { type CheckContext, checkAnswer, describeAnswer, redact, registerFixtureSecrets } from './invariants.js';
import { type Expectation, expectationFor } from './oracle.js';
import { type FuzzRequest, wireBytes } from './request.js';
import { SecretRegistry } from './secrets.js';
import type { SpecModels } from './spec-model.js';
import { StoreWatch } from './state.js';
import { Statistics } from './statistics.js';

export { createFixture, type Fixture } from './fixture.js';

/** A request that broke an invariant, with the answer and the server's log lines (secrets redacted). */
export class FuzzFailure extends Error {
  override name = 'FuzzFailure';

  constructor(
    readonly invariant: string,
    readonly detail: string,
    readonly request: FuzzRequest,
    readonly answer: string,
    readonly logged: string[],
  ) {
    super(detail);
  }
}

/** Sends requests to the server and checks every invariant; the first one broken throws a `FuzzFailure`. */
export class Fuzzer {
  readonly statistics = new Statistics();
  private readonly checks: CheckContext;
  private readonly port: number;
  private logChecked = 0;
  private inFlight: AbortController | undefined;
  private readonly uncaught: unknown[] = [];

  private constructor(
    private readonly server: TestServer,
    private readonly models: SpecModels,
    private readonly fixture: Fixture,
    private readonly watch: StoreWatch,
  ) {
    this.port = Number(new URL(server.baseUrl).port);
    const secrets = new SecretRegistry();
    registerFixtureSecrets(secrets, fixture.bindings);
    const idsOf = (organization: 'own' | 'other') =>
      new Set([...fixture.keys].filter(([, key]) => key.organization === organization).map(([id]) => id));
    this.checks = { fixture, keyIds: { own: idsOf('own'), other: idsOf('other') }, secrets, requestIds: new Set() };
  }

  /** A fuzzer of the server, whose store holds the fixture. */
  static async start(server: TestServer, models: SpecModels, fixture: Fixture): Promise<Fuzzer> {
    return new Fuzzer(server, models, fixture, await StoreWatch.start(server, fixture));
  }

  /** Records an exception the server did not catch, and fails the request in flight at once. */
  uncaughtException(error: unknown): void {
    this.uncaught.push(error);
    this.inFlight?.abort('the server threw an uncaught exception');
  }

  /** Sends one request and checks it; throws a `FuzzFailure` for the first invariant it breaks. */
  async send(request: FuzzRequest): Promise<void> {
    const { bindings } = this.fixture;
    const expectation = expectationFor(request, this.models, bindings);
    const { bytes } = wireBytes(request, bindings);
    const logStart = this.server.logLines.length;
    this.inFlight = new AbortController();
    const answer = await exchange(this.port, bytes, {
      head: request.method === 'HEAD',
      timeoutMs: 10_000,
      abort: this.inFlight.signal,
    });
    this.inFlight = undefined;
    this.statistics.record(request, expectation, answer);
    const problems: unknown[] = [];
    const attempt = async (check: () => void | Promise<void>) => {
      try {
        await check();
      } catch (error) {
        problems.push(error);
      }
    };
    await attempt(() => {
      const [error] = this.uncaught.splice(0);
      if (error !== undefined) {
        throw new InvariantError(
          'the server never throws an uncaught exception',
          String((error as Error)?.stack ?? error),
        );
      }
    });
    await attempt(() => checkAnswer(this.checks, expectation, answer, request.method));
    const requestId = answer.answered ? headerOf(answer, 'request-id') : undefined;
    await attempt(() => this.checkLog(requestId, logStart));
    // Always last: it restores the fixture's keys after an accepted write, so that every request meets one state.
    await attempt(() => this.checkStore(expectation, answer, requestId));
    const [first] = problems;
    if (first !== undefined) {
      throw this.report(first, request, answer, requestId);
    }
  }

  /** The failure, with what a report needs: the request, the answer and the server's log lines, all redacted. */
  private report(
    problem: unknown,
    request: FuzzRequest,
    answer: Answer | NoAnswer,
    requestId: string | undefined,
  ): FuzzFailure {
    const { bindings } = this.fixture;
    const { secrets } = this.checks;
    const logged = requestId ? this.server.logLines.filter((line) => line.includes(requestId)) : [];
    const invariant = problem instanceof InvariantError ? problem.invariant : 'an assertion';
    const message = problem instanceof Error ? `${problem.name}: ${problem.message}` : String(problem);
    return new FuzzFailure(
      invariant,
      redact(message, bindings, secrets),
      request,
      redact(describeAnswer(answer), bindings, secrets),
      logged.map((line) => redact(line, bindings, secrets)),
    );
  }

  /** The request was logged under its request-id, and no log line holds a secret. */
  private async checkLog(requestId: string | undefined, logStart: number): Promise<void> {
    const lines = this.server.logLines;
    // The request log line is written when the response closes, which may be just after the client has read it.
    const deadline = Date.now() + 1000;
    while (requestId && !lines.slice(logStart).some((line) => line.includes(requestId)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const fresh = lines.slice(this.logChecked);
    this.logChecked = lines.length;
    for (const line of fresh) {
      const leak = this.checks.secrets.find(line);
      if (leak) {
        const shown = redact(line, this.fixture.bindings, this.checks.secrets);
        throw new InvariantError('no secret in a log line', `${leak.shown} in ${shown}`);
      }
    }
    if (requestId && !lines.slice(logStart).some((line) => line.includes(requestId))) {
      throw new InvariantError('every request is logged under its request-id', `no log line holds ${requestId}`);
    }
  }

  /** What the request changed in the store is what it may change; then the fixture's keys are restored. */
  private async checkStore(
    expectation: Expectation,
    answer: Answer | NoAnswer,
    requestId: string | undefined,
  ): Promise<void> {
    const changes = await this.watch.changes();
    // Whatever the answer said, the keys created are their organization's from now on.
    for (const organization of ['own', 'other'] as const) {
      for (const key of changes.created[organization]) {
        this.checks.keyIds[organization].add(key.id);
      }
    }
    try {
      judgeChanges({ expectation, answer, requestId, changes, fixture: this.fixture });
    } finally {
      await this.watch.settle(changes);
    }
  }
}
