import { API_VERSION_NAMES, type SchemasOf } from '@apikeys/api-types';
import { createParser } from 'eventsource-parser';
import { authHeaders } from './in-process-server.js';
import { schemaErrors } from './spec-responses.js';

/** One event of the change feed, as the spec writes it. */
export type FeedEvent = SchemasOf<typeof API_VERSION_NAMES.v2026_10_21>['KeyChangeFeedEvent'];

/** A subscription to `GET /v1/keys/changes`, read as it comes. */
export interface FeedReader {
  response: Response;
  /** Every event so far, each checked against the spec's `KeyChangeFeedEvent` and its `event:` name. */
  events: FeedEvent[];
  /** Everything received so far, as text: the events, or a refusal's JSON body. */
  text(): string;
  /** Resolves with the first event from index `from` on that `matches`; rejects after `timeoutMs`. */
  next(matches: (event: FeedEvent) => boolean, timeoutMs?: number, from?: number): Promise<FeedEvent>;
  /** Resolves once the server has ended the stream (or the connection broke); rejects after `timeoutMs`. */
  ended(timeoutMs?: number): Promise<void>;
  /** Whether the stream has ended. */
  readonly isEnded: boolean;
  /** Leaves: aborts the request. */
  close(): void;
}

export const CHANGES_PATH = '/v1/keys/changes';

/**
 * Subscribes to the change feed at `baseUrl` with `credential`, and reads the stream in the background. Resolves
 * once the response's headers arrive; the caller checks `response.status` (an error's body is then in `text()`).
 */
export async function subscribeToChanges(baseUrl: string, credential: string): Promise<FeedReader> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}${CHANGES_PATH}`, {
    headers: authHeaders(credential, { 'vendor-version': API_VERSION_NAMES.v2026_10_21 }),
    signal: abort.signal,
  });
  const events: FeedEvent[] = [];
  const problems: string[] = [];
  let received = '';
  let isEnded = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) {
      waiter();
    }
  };
  const parser = createParser({
    onEvent(message) {
      const event = JSON.parse(message.data) as FeedEvent;
      const errors = schemaErrors('KeyChangeFeedEvent', event, API_VERSION_NAMES.v2026_10_21);
      if (errors.length > 0 || message.event !== event.type) {
        problems.push(`${message.event}: ${message.data}: ${errors.join('; ')}`);
      }
      events.push(event);
      wake();
    },
  });
  // An error answer is JSON: it is kept as text only.
  const isStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body ?? []) {
        const text = decoder.decode(chunk, { stream: true });
        received += text;
        if (isStream) {
          parser.feed(text);
        }
      }
    } catch {
      // Aborted by `close`, or the connection broke: either way, the stream has ended.
    }
    isEnded = true;
    wake();
  })();
  const until = <T>(ready: () => T | undefined, timeoutMs: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        if (problems.length > 0) {
          finish();
          reject(new Error(`events that do not match the spec: ${problems.join(' | ')}`));
          return;
        }
        const found = ready();
        if (found !== undefined) {
          finish();
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what} not within ${timeoutMs} ms; events: ${JSON.stringify(events)}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return {
    response,
    events,
    text: () => received,
    get isEnded() {
      return isEnded;
    },
    next: (matches, timeoutMs = 5_000, from = 0) =>
      until(() => events.slice(from).find(matches), timeoutMs, 'no matching event'),
    ended: async (timeoutMs = 5_000) => {
      await until(() => (isEnded ? true : undefined), timeoutMs, 'the end of the stream');
      await reading;
    },
    close: () => abort.abort(),
  };
}
