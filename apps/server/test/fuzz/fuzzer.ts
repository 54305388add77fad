/**
 * The fuzzer's harness: the fixture (two organizations, their keys and secrets), and `send`, which sends one
 * request to the real server over HTTP and checks every invariant: the answer's, the log's and the store's.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApiKey, ApiKeyStatus } from '@apikeys/api-types';
import { createKey, DEFAULT_ORGANIZATION, snapshotKeys, type TestServer } from '@apikeys/server/testing';
import type { ArbitraryContext } from './arbitraries.js';
import { type Answer, exchange, headerOf, type NoAnswer } from './exchange.js';
import { type CheckContext, checkAnswer, describeAnswer, InvariantError, redact, secretsOf } from './invariants.js';
import { type Expectation, expectationFor } from './oracle.js';
import { type Bindings, type FuzzRequest, ID_PLACEHOLDERS, wireBytes } from './request.js';
import type { SpecModel } from './spec-model.js';

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

/** The state of both organizations: every key as the API shows it. */
interface State {
  own: ApiKey[];
  other: ApiKey[];
}

/** The organizations, keys and secrets the fuzzer's placeholders stand for. */
export interface Fixture {
  bindings: Bindings;
  organizations: { own: string; other: string };
  initial: State;
  knownByPrefix: ArbitraryContext['knownByPrefix'];
}

const WORKSPACES = ['wrkspc_fuzz_a', 'wrkspc_fuzz_b'];
const USERS = ['user_fuzz_1', 'user_fuzz_2'];

/** Creates two organizations with keys of every status and workspace, a disabled admin key, and their secrets. */
export async function createFixture(server: TestServer): Promise<Fixture> {
  const { store } = server;
  const own = DEFAULT_ORGANIZATION.id;
  const other = await server.createOrganization('fuzz other');
  const disabled = await store.createAdminKey({ organizationId: own, name: 'fuzz disabled admin' });
  await store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');
  const names = ['oldest', 'Billing service', 'é e\u0301 😀 \u202e', 'archived one', 'x'.repeat(500), 'newest'];
  const statuses: ApiKeyStatus[] = ['active', 'inactive', 'active', 'archived', 'active', 'active'];
  const created: { apiKey: ApiKey; secret: string }[] = [];
  for (const [index, name] of names.entries()) {
    created.push(
      await createKey(store, own, {
        name,
        workspaceId: index % 3 === 2 ? null : (WORKSPACES[index % 2] ?? null),
        createdBy: { id: USERS[index % 2] ?? 'user_fuzz_1', type: index === 3 ? 'service_account' : 'user' },
        status: statuses[index] ?? 'active',
      }),
    );
  }
  const foreign = [];
  for (const [index, name] of ['other 1', 'other 2'].entries()) {
    foreign.push(
      await createKey(store, other.id, {
        name,
        workspaceId: WORKSPACES[index] ?? null,
        createdBy: { id: USERS[0] ?? 'user_fuzz_1', type: 'user' },
      }),
    );
  }
  const [oldest, , , , , newest] = created;
  const [foreignKey] = foreign;
  if (!oldest || !newest || !foreignKey) {
    throw new Error('the fixture keys were not created');
  }
  const bindings: Bindings = {
    $ADMIN_KEY: server.adminKey,
    $OTHER_ADMIN_KEY: other.adminKey,
    $DISABLED_ADMIN_KEY: disabled.secret,
    $API_KEY_SECRET: newest.secret,
    $OTHER_API_KEY_SECRET: foreignKey.secret,
    $KEY_ID: newest.apiKey.id,
    $OLDER_KEY_ID: oldest.apiKey.id,
    $OTHER_ORG_KEY_ID: foreignKey.apiKey.id,
    $HOST: new URL(server.baseUrl).host,
  };
  const organizations = { own, other: other.id };
  return {
    bindings,
    organizations,
    initial: await snapshot(server, organizations),
    knownByPrefix: { [`${newest.apiKey.id.split('_')[0]}_`]: ID_PLACEHOLDERS, wrkspc_: WORKSPACES, user_: USERS },
  };
}

async function snapshot(server: TestServer, organizations: Fixture['organizations']): Promise<State> {
  return {
    own: await snapshotKeys(server.store, organizations.own),
    other: await snapshotKeys(server.store, organizations.other),
  };
}

/** The keys whose API view differs between two states (by ID; added and removed ones too). */
function changedKeys(before: State, after: State): string[] {
  const index = (state: State) => new Map([...state.own, ...state.other].map((key) => [key.id, key]));
  const was = index(before);
  const is = index(after);
  const ids = new Set([...was.keys(), ...is.keys()]);
  return [...ids].filter((id) => !isDeepStrictEqual(was.get(id), is.get(id)));
}

/** Counts of what was sent and answered, for the summary and the coverage check. */
export class Statistics {
  readonly statuses = new Map<string, number>();
  readonly labels = new Map<string, number>();
  readonly predictions = new Map<string, number>();
  requests = 0;

  record(request: FuzzRequest, expectation: Expectation, answer: Answer | NoAnswer): void {
    this.requests += 1;
    const key = `${expectation.operation?.operationId ?? '(no operation)'} ${answer.answered ? answer.status : 'no answer'}`;
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    const { exact, violations } = expectation;
    const prediction = !exact
      ? 'statuses allowed, outcome not predicted'
      : violations.length === 0
        ? 'valid: success or a refusal naming a value sent'
        : violations.length === 1 && exact.prefixes.length > 0
          ? 'one reason to refuse: exact status and the name in the message'
          : 'reasons to refuse: one of their statuses';
    this.predictions.set(prediction, (this.predictions.get(prediction) ?? 0) + 1);
    for (const label of request.labels.slice(2)) {
      // `query limit: invalid value` and `query status: invalid value` are one kind: `query: invalid value`.
      const kind = label
        .replace(/^(query|path) [^:]+:/, '$1:')
        .replace(/ [("[{$%].*$/, '')
        .replace(/\d+/g, 'N');
      this.labels.set(kind, (this.labels.get(kind) ?? 0) + 1);
    }
  }

  count(key: string): number {
    return this.statuses.get(key) ?? 0;
  }

  summary(): string {
    const sorted = (map: Map<string, number>) =>
      [...map.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `  ${key}: ${count}`);
    return [
      'answers by operation and status:',
      ...sorted(this.statuses),
      "the oracle's predictions:",
      ...sorted(this.predictions),
      'hostile forms sent (by kind):',
      ...sorted(this.labels),
    ].join('\n');
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

  constructor(
    private readonly server: TestServer,
    private readonly model: SpecModel,
    private readonly fixture: Fixture,
  ) {
    this.port = Number(new URL(server.baseUrl).port);
    this.checks = {
      model,
      bindings: fixture.bindings,
      keyIds: {
        own: new Set(fixture.initial.own.map((key) => key.id)),
        other: new Set(fixture.initial.other.map((key) => key.id)),
      },
      requestIds: new Set(),
    };
  }

  /** Records an exception the server did not catch, and fails the request in flight at once. */
  uncaughtException(error: unknown): void {
    this.uncaught.push(error);
    this.inFlight?.abort('the server threw an uncaught exception');
  }

  /** Sends one request and checks it; throws a `FuzzFailure` for the first invariant it breaks. */
  async send(request: FuzzRequest): Promise<void> {
    const { bindings } = this.fixture;
    const expectation = expectationFor(request, this.model, bindings);
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
    // Always last: it restores the store after an accepted write, so that every request meets the same state.
    await attempt(() => this.checkState(expectation, answer));
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
    const logged = requestId ? this.server.logLines.filter((line) => line.includes(requestId)) : [];
    const invariant = problem instanceof InvariantError ? problem.invariant : 'an assertion';
    const message = problem instanceof Error ? `${problem.name}: ${problem.message}` : String(problem);
    return new FuzzFailure(
      invariant,
      redact(message, bindings),
      request,
      redact(describeAnswer(answer), bindings),
      logged.map((line) => redact(line, bindings)),
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
      for (const { value, shown } of secretsOf(this.fixture.bindings)) {
        if (line.includes(value)) {
          throw new InvariantError('no secret in a log line', `${shown} in ${redact(line, this.fixture.bindings)}`);
        }
      }
    }
    if (requestId && !lines.slice(logStart).some((line) => line.includes(requestId))) {
      throw new InvariantError('every request is logged under its request-id', `no log line holds ${requestId}`);
    }
  }

  /**
   * A request changes nothing, except an accepted (2xx) write, which changes the one key it returns, to exactly
   * what it returns. Any change is then undone, so that the next request meets the initial state again.
   */
  private async checkState(expectation: Expectation, answer: Answer | NoAnswer): Promise<void> {
    const { initial, organizations } = this.fixture;
    const after = await snapshot(this.server, organizations);
    const changed = changedKeys(initial, after);
    if (changed.length === 0) {
      return;
    }
    await this.restore(changed);
    const write = expectation.operation && expectation.operation.method !== 'GET';
    if (!answer.answered || answer.status < 200 || answer.status >= 300 || !write) {
      throw new InvariantError(
        'a refused request (or a read) changes nothing',
        `${answer.answered ? answer.status : 'no answer'} but keys changed: ${changed.join(', ')}`,
      );
    }
    const returned = JSON.parse(answer.body.toString('utf8')) as ApiKey;
    const stored = [...after.own, ...after.other].find((key) => key.id === returned.id);
    if (changed.length !== 1 || changed[0] !== returned.id || !isDeepStrictEqual(stored, returned)) {
      throw new InvariantError(
        'a write changes only the key it returns, to what it returns',
        `changed: ${changed.join(', ')}; returned ${JSON.stringify(returned)}; stored ${JSON.stringify(stored)}`,
      );
    }
  }

  private async restore(ids: string[]): Promise<void> {
    const { initial, organizations } = this.fixture;
    for (const id of ids) {
      const own = initial.own.find((key) => key.id === id);
      const original = own ?? initial.other.find((key) => key.id === id);
      if (original) {
        const organizationId = own ? organizations.own : organizations.other;
        await this.server.store.updateApiKey(organizationId, id, { name: original.name, status: original.status });
      }
    }
    const restored = changedKeys(initial, await snapshot(this.server, organizations));
    if (restored.length > 0) {
      throw new Error(`the fuzzer cannot restore keys ${restored.join(', ')}: later results would be meaningless`);
    }
  }
}
