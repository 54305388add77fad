import { ConnectionError, TimeoutError } from './errors.js';

/** Options of a single call; they apply to every page an auto-paginating call fetches. */
export interface RequestOptions {
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  maxRetries?: number;
  timeoutMs?: number;
  /** The whole call's time, every attempt and wait included (see the client's `deadlineMs`). */
  deadlineMs?: number;
}

/** What `keys.verify` takes besides the secret. */
export interface VerifyOptions extends RequestOptions {
  /**
   * A requirement the key's permissions must satisfy (`PermissionQuery` in the spec, such as
   * `documents.read AND (documents.write OR admin.*)`): an otherwise valid key that does not satisfy it is
   * `INSUFFICIENT_PERMISSIONS`.
   */
  permissions?: string;
}

/** A `fetch` as openapi-fetch calls it: one `Request` in, one `Response` out. */
export type FetchFunction = (request: Request) => Promise<Response>;

/** How requests are sent: the fetch to use, the retry policy, the timeout of each attempt and of the whole request. */
export interface TransportSettings {
  fetch: FetchFunction;
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: number;
  /** Time allowed for each attempt, from sending the request to reading the whole response body. */
  timeoutMs: number;
  /**
   * Time allowed for the whole request, every attempt and wait included: the last attempt is cut short at it, and no
   * retry is made whose wait would pass it. Undefined: only each attempt is bounded.
   */
  deadlineMs?: number | undefined;
  /** The first backoff delay; it doubles on each retry, up to `retryMaxDelayMs`. */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

/**
 * Which failures a request may be retried after. `idempotent` requests (reads, and updates, which set fields to
 * values) after any retryable one. `not-idempotent` ones (a create, a rotation) only after a 429, which changes
 * nothing: after a timeout, a dropped connection or a 5xx, the first attempt may have taken effect, and a second
 * would create a second key whose secret the first answer never showed.
 */
export type RetryPolicy = 'idempotent' | 'not-idempotent';

/** A `retry-after` longer than this is not waited for: the error is thrown at once. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The longest delay `setTimeout` supports; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Statuses that must not carry a body, which the `Response` constructor refuses one for. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Checks one numeric setting; throws a `RangeError` naming it when it is out of range. */
export function checkSetting(name: string, value: number, { min, integer }: { min: number; integer: boolean }): number {
  const valid =
    Number.isFinite(value) && value >= min && value <= MAX_TIMER_MS && (!integer || Number.isInteger(value));
  if (!valid) {
    throw new RangeError(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${MAX_TIMER_MS}`);
  }
  return value;
}

/** 408, 429 and 5xx are worth another attempt; other statuses are final. A request that is not idempotent: 429 only. */
export function isRetryableStatus(status: number, policy: RetryPolicy = 'idempotent'): boolean {
  return status === 429 || (policy === 'idempotent' && (status === 408 || status >= 500));
}

/** `retry-after` in milliseconds: delay-seconds (fractions allowed) or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) {
    return undefined;
  }
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    return Number(trimmed) * 1000;
  }
  // An HTTP date always names its month; the check keeps Date.parse from reading "-1" as a year.
  const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter: base × 2^attempt, capped, minus up to a quarter at random. */
export function backoffDelay(attempt: number, settings: TransportSettings): number {
  const delay = Math.min(settings.retryMaxDelayMs, settings.retryBaseDelayMs * 2 ** attempt);
  return delay * (1 - Math.random() * 0.25);
}

/** The delay before retrying a response, or undefined when it must not be retried. */
function retryDelay(response: Response, attempt: number, settings: TransportSettings): number | undefined {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  if (retryAfter === undefined) {
    return backoffDelay(attempt, settings);
  }
  return retryAfter <= MAX_RETRY_AFTER_MS ? retryAfter : undefined;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Settles like `promise`, or rejects as soon as `signal` aborts: a `fetch` that ignores its signal (an injected one,
 * say) still cannot outlive the timeout.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

/** How long an attempt may take, and what a `TimeoutError` says when it runs out. */
interface AttemptLimit {
  ms: number;
  message: string;
}

/** The limit of the next attempt: `timeoutMs`, or what is left before the deadline when that is shorter. */
function attemptLimit(settings: TransportSettings, deadline: number): AttemptLimit {
  const left = deadline - performance.now();
  if (settings.deadlineMs !== undefined && left < settings.timeoutMs) {
    return { ms: Math.max(0, left), message: `no complete response within the deadline of ${settings.deadlineMs} ms` };
  }
  return { ms: settings.timeoutMs, message: `request timed out after ${settings.timeoutMs} ms` };
}

/**
 * One attempt: sends a copy of `request` and reads the whole body, within `limit`. The body is read here, not later,
 * so that the timeout covers it and a connection lost mid-body counts as a connection error (and is retried).
 */
async function attempt(request: Request, settings: TransportSettings, limit: AttemptLimit): Promise<Response> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, limit.ms);
  const forwardAbort = () => controller.abort(request.signal.reason);
  request.signal.addEventListener('abort', forwardAbort, { once: true });
  try {
    const response = await untilAborted(
      settings.fetch(new Request(request.clone(), { signal: controller.signal })),
      controller.signal,
    );
    const body = await untilAborted(response.arrayBuffer(), controller.signal);
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  } catch (error) {
    if (timedOut) {
      throw new TimeoutError(limit.message, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', forwardAbort);
  }
}

/**
 * Sends `request`, retrying connection errors, timeouts, 408, 429 and 5xx (only 429 for a request that is not
 * idempotent) up to `maxRetries` times with exponential backoff and jitter, or after the `retry-after` the server
 * asked for, all within `deadlineMs` when there is one. Resolves with the final response, whatever its status;
 * rejects with `ConnectionError` or `TimeoutError` when no response arrived, or with the abort reason of
 * `request.signal` when the caller aborted.
 */
export async function sendWithRetries(
  request: Request,
  settings: TransportSettings,
  policy: RetryPolicy = 'idempotent',
): Promise<Response> {
  const callerSignal = request.signal;
  const deadline = performance.now() + (settings.deadlineMs ?? Number.POSITIVE_INFINITY);
  /** Whether a wait of `ms` still leaves time for another attempt before the deadline. */
  const fitsBeforeDeadline = (ms: number) => performance.now() + ms < deadline;
  for (let attemptNumber = 0; ; attemptNumber += 1) {
    callerSignal.throwIfAborted();
    let response: Response;
    try {
      response = await attempt(request, settings, attemptLimit(settings, deadline));
    } catch (error) {
      if (callerSignal.aborted) {
        throw callerSignal.reason;
      }
      const failure =
        error instanceof TimeoutError
          ? error
          : new ConnectionError(`connection error: ${describe(error)}`, { cause: error });
      const delay = backoffDelay(attemptNumber, settings);
      if (attemptNumber >= settings.maxRetries || policy !== 'idempotent' || !fitsBeforeDeadline(delay)) {
        throw failure;
      }
      await sleep(delay, callerSignal);
      continue;
    }
    if (!isRetryableStatus(response.status, policy) || attemptNumber >= settings.maxRetries) {
      return response;
    }
    const delay = retryDelay(response, attemptNumber, settings);
    if (delay === undefined || !fitsBeforeDeadline(delay)) {
      return response;
    }
    await sleep(delay, callerSignal);
  }
}
