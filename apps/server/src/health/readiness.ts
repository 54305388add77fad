import type { components } from '@apikeys/api-types';
import { DatabaseUnavailableError, type Store } from '@apikeys/store';

type ReadinessReport = components['schemas']['Readiness'];
type Check = components['schemas']['ReadinessCheck'];

/** The longest the readiness probe waits for the database: a probe must answer before its load balancer gives up. */
export const READINESS_DEADLINE_MS = 1000;

const PASS: Check = { status: 'pass' };
const fail = (message: string): Check => ({ status: 'fail', message });

/**
 * Whether this server should get traffic: it has started (the validator is warm), it is not shutting down, and its
 * database answers a trivial query within a short deadline. Probes that arrive while a database check runs share
 * it, so a flood of probes sends one query at a time.
 */
export class Readiness {
  #started = false;
  #draining = false;
  #storeCheck: Promise<Check> | undefined;
  readonly #deadlineMs: number;

  constructor(
    private readonly store: Store,
    options: { deadlineMs?: number | undefined } = {},
  ) {
    this.#deadlineMs = Math.min(options.deadlineMs ?? READINESS_DEADLINE_MS, READINESS_DEADLINE_MS);
  }

  /** The server has finished starting: from now on it may report ready. */
  markStarted(): void {
    this.#started = true;
  }

  /** The server is shutting down: from now on it reports not ready, whatever its database says. */
  markDraining(): void {
    this.#draining = true;
  }

  get draining(): boolean {
    return this.#draining;
  }

  async report(): Promise<ReadinessReport> {
    const checks = {
      startup: this.#started ? PASS : fail('the server is starting'),
      shutdown: this.#draining ? fail('the server is shutting down') : PASS,
      store: await this.#checkStore(),
    };
    const ready = Object.values(checks).every((check) => check.status === 'pass');
    return { status: ready ? 'ready' : 'not_ready', checks };
  }

  #checkStore(): Promise<Check> {
    this.#storeCheck ??= this.#pingStore().finally(() => {
      this.#storeCheck = undefined;
    });
    return this.#storeCheck;
  }

  async #pingStore(): Promise<Check> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<Check>((resolve) => {
      timer = setTimeout(
        () => resolve(fail(`the database did not answer within ${this.#deadlineMs} ms`)),
        this.#deadlineMs,
      );
    });
    const ping = this.store.ping().then(
      () => PASS,
      // Only the reason is reported: an engine's message may name a host or a file.
      (error: unknown) =>
        fail(
          error instanceof DatabaseUnavailableError
            ? `the database is unavailable (${error.reason})`
            : 'the database check failed',
        ),
    );
    try {
      return await Promise.race([ping, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
