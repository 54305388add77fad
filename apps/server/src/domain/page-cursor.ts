import { quotable } from '@apikeys/permissions';
import type { PageCursor } from '@apikeys/store';
import { AppError, invalidRequest } from './errors.js';

/** The cursors a list takes, as query parameters. */
export interface CursorParams {
  afterId?: string | undefined;
  beforeId?: string | undefined;
}

/** The query parameter that carries each kind of cursor, which the errors about a cursor name. */
const CURSOR_PARAMETER: Record<PageCursor['direction'], string> = { after: 'after_id', before: 'before_id' };

/** `with ID apikey_...`, or `with this ID` when the value does not look like an ID and so is not repeated. */
export function withId(id: string): string {
  return quotable(id, 'id') ? `with ID ${id}` : 'with this ID';
}

/** The 404 of an item that does not exist in the organization: `api_key_id: no API key with ID ...`. */
export function notFound(parameter: string, noun: string, id: string): AppError {
  return new AppError('not_found_error', `${parameter}: no ${noun} ${withId(id)}`);
}

/** At most one cursor; both are a client error. */
export function pageCursor({ afterId, beforeId }: CursorParams): PageCursor | undefined {
  if (afterId !== undefined && beforeId !== undefined) {
    throw invalidRequest(CURSOR_PARAMETER.before, 'cannot be combined with after_id; pass at most one cursor');
  }
  if (afterId !== undefined) {
    return { direction: 'after', id: afterId };
  }
  return beforeId === undefined ? undefined : { direction: 'before', id: beforeId };
}

/** The error for a cursor that names no item (`noun`: "API key", say) of the organization. */
export function unknownCursor(cursor: PageCursor | undefined, noun: string): Error {
  if (!cursor) {
    return new Error('the store reported an unknown cursor for a query without one');
  }
  return invalidRequest(CURSOR_PARAMETER[cursor.direction], `no ${noun} ${withId(cursor.id)}`);
}
