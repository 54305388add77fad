import { ApiKeysError } from '@apikeys/client';

/** What an error notice shows: the API's message and type, and the request ID to quote to an operator. */
export function describeError(error: unknown): { message: string; type?: string; requestId?: string } {
  if (error instanceof ApiKeysError) {
    return {
      message: error.message,
      type: error.type,
      ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

/** An error from the API, announced to screen readers, with its message, type and `request_id`. */
export function ErrorNotice({ error, title = 'The request failed' }: { error: unknown; title?: string }) {
  const { message, type, requestId } = describeError(error);
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{title}</p>
      <p>
        {message}
        {type === undefined ? null : <span className="muted"> ({type})</span>}
      </p>
      {requestId === undefined ? null : (
        <p className="muted">
          Request ID: <code data-testid="request-id">{requestId}</code>
        </p>
      )}
    </div>
  );
}
