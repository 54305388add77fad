/** A request as it left the client. */
export interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
}

/** A real fetch that records every request it sends (nothing is mocked: each request reaches the server). */
export function observedFetch(): { fetch: (request: Request) => Promise<Response>; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  return {
    sent,
    fetch(request) {
      sent.push({ method: request.method, url: new URL(request.url), headers: new Headers(request.headers) });
      return fetch(request);
    },
  };
}
