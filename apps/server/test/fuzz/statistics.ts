/** Counts of what the fuzzer sent and what came back, for the summary and the coverage check. */
import type { Answer, NoAnswer } from './exchange.js';
import type { Expectation } from './oracle.js';
import type { FuzzRequest } from './request.js';

/** Counts of what was sent and answered, by operation and status, by prediction, and by hostile form. */
export class Statistics {
  readonly statuses = new Map<string, number>();
  /** Requests by the API version they name and the operation they reach. */
  readonly operations = new Map<string, number>();
  readonly labels = new Map<string, number>();
  readonly predictions = new Map<string, number>();
  /** Outcomes the coverage check asks for: credentials, verdicts, writes with an expiry. */
  readonly outcomes = new Map<string, number>();
  requests = 0;

  record(request: FuzzRequest, expectation: Expectation, answer: Answer | NoAnswer): void {
    this.requests += 1;
    const operation = expectation.operation?.operationId ?? '(no operation)';
    const status = answer.answered ? answer.status : 'no answer';
    this.#count(this.statuses, `${operation} ${status}`);
    this.#count(this.operations, `${expectation.version ?? '(no version)'} ${operation}`);
    if (expectation.version && expectation.operation) {
      this.#count(this.statuses, `${expectation.version} ${operation} ${status}`);
    }
    const { exact, violations } = expectation;
    const prediction = !exact
      ? 'statuses allowed, outcome not predicted'
      : violations.length === 0
        ? 'valid: a success (or an outcome the spec leaves open)'
        : violations.length === 1 && exact.prefixes.length > 0
          ? 'one reason to refuse: exact status and the name in the message'
          : 'reasons to refuse: one of their statuses';
    this.#count(this.predictions, prediction);
    for (const label of request.labels.slice(2)) {
      // `query limit: invalid value` and `query status: invalid value` are one kind: `query: invalid value`.
      const kind = label
        .replace(/^(query|path) [^:]+:/, '$1:')
        .replace(/ [("[{$%].*$/, '')
        .replace(/\d+/g, 'N');
      this.#count(this.labels, kind);
    }
    if (answer.answered && expectation.caller) {
      const { kind, placement } = expectation.caller;
      const versioned = `${expectation.version ?? '(no version)'} ${operation} ${answer.status}`;
      this.#count(this.outcomes, `${versioned} for a ${kind} key in the ${placement}`);
      const body = expectation.body as Record<string, unknown> | undefined;
      if (body && typeof body.expires_at === 'string') {
        this.#count(this.outcomes, `${versioned} with an expires_at`);
      }
      if ((expectation.query.get('type')?.length ?? 0) > 1) {
        this.#count(this.outcomes, `${versioned} with a repeated type`);
      }
      if (expectation.verdict && answer.status === 200) {
        this.#count(this.outcomes, `verifyApiKey ${expectation.verdict.code}`);
      }
      const [only, ...others] = expectation.violations;
      if (only?.rule && others.length === 0) {
        this.#count(this.outcomes, `${versioned}: ${only.reason}`);
      } else if (only && others.length === 0) {
        // The reason up to the value it quotes: `query occurred_after`, `the body breaks its schema (expires_at)`.
        this.#count(this.outcomes, `${versioned} refuses ${only.reason.split(/[:"]/)[0]?.trim()}`);
      }
    }
  }

  #count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  count(key: string): number {
    return this.statuses.get(key) ?? this.outcomes.get(key) ?? 0;
  }

  /** The number of outcomes whose key matches `pattern`. */
  matching(pattern: RegExp): number {
    return [...this.outcomes].reduce((sum, [key, count]) => sum + (pattern.test(key) ? count : 0), 0);
  }

  summary(): string {
    const sorted = (map: Map<string, number>) =>
      [...map.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `  ${key}: ${count}`);
    return [
      'requests by version and operation:',
      ...sorted(this.operations),
      'answers by operation and status (and by version):',
      ...sorted(this.statuses),
      'successes by caller, and outcomes:',
      ...sorted(this.outcomes),
      "the oracle's predictions:",
      ...sorted(this.predictions),
      'hostile forms sent (by kind):',
      ...sorted(this.labels),
    ].join('\n');
  }
}
