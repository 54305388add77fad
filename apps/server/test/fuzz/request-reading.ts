/**
 * How the server reads a request before any of its code runs, as the fuzzer models it: the headers as Node presents
 * them, the request-target split into path and query, percent-decoding, and the spec path a path matches.
 */
import type { Bindings } from './placeholders.js';
import { bind, type FuzzRequest } from './request.js';
import type { PathModel, SpecModel } from './spec-model.js';

/** Headers as Node presents them: names lower-cased, values trimmed, repeated headers joined (or discarded). */
export function nodeHeaders(request: FuzzRequest, bindings: Bindings): Map<string, string> {
  // Node keeps the first of these and discards repeats; it joins other repeated headers with ', ' (cookie: '; ').
  const single = new Set([
    'age',
    'authorization',
    'content-length',
    'content-type',
    'etag',
    'expires',
    'from',
    'host',
    'if-modified-since',
    'if-unmodified-since',
    'last-modified',
    'location',
    'max-forwards',
    'proxy-authorization',
    'referer',
    'retry-after',
    'server',
    'user-agent',
  ]);
  const headers = new Map<string, string>();
  for (const header of request.headers) {
    if (header.length === 1) {
      continue;
    }
    const name = header[0].toLowerCase();
    const value = bind(header[1], bindings).replace(/^[ \t]+|[ \t]+$/g, '');
    const previous = headers.get(name);
    if (previous === undefined) {
      headers.set(name, value);
    } else if (!single.has(name)) {
      headers.set(name, `${previous}${name === 'cookie' ? '; ' : ', '}${value}`);
    }
  }
  return headers;
}

/** Decodes a query or path component exactly: `+` as space in a query, and UTF-8 only; undefined otherwise. */
export function strictDecode(raw: string, plusIsSpace: boolean): string | undefined {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replaceAll('+', ' ') : raw);
  } catch {
    return undefined;
  }
}

/** The path and query of a request-target, or undefined for targets without a path (`*`, a fragment, no leading slash). */
export function splitTarget(
  target: string,
): { path: string; query: string | undefined; fragment: boolean } | undefined {
  let rest = target;
  let fragment = false;
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(rest);
  if (absolute) {
    rest = rest.slice(absolute[0].length) || '/';
  }
  if (!rest.startsWith('/')) {
    return undefined;
  }
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    // A request-target has no fragment (RFC 9112, section 3.2). A server may refuse it (400), or ignore it as user
    // agents never send one; either way the rest of the target names the operation.
    fragment = true;
    rest = rest.slice(0, hash);
  }
  const question = rest.indexOf('?');
  return question === -1
    ? { path: rest, query: undefined, fragment }
    : { path: rest.slice(0, question), query: rest.slice(question + 1), fragment };
}

/** The spec path a raw path matches, literal segments exactly (case and all), parameters as any non-empty segment. */
export function matchPath(
  model: SpecModel,
  rawPath: string,
): { path: PathModel; values: Record<string, string> } | undefined {
  const parts = rawPath.split('/').slice(1);
  let best: { path: PathModel; values: Record<string, string>; literals: number } | undefined;
  for (const path of model.paths) {
    if (path.segments.length !== parts.length) {
      continue;
    }
    const values: Record<string, string> = {};
    let literals = 0;
    const matches = path.segments.every((segment, index) => {
      const part = parts[index] ?? '';
      if ('literal' in segment) {
        literals += 1;
        return part === segment.literal;
      }
      values[segment.parameter] = part;
      return part !== '';
    });
    if (matches && (!best || literals > best.literals)) {
      best = { path, values, literals };
    }
  }
  return best && { path: best.path, values: best.values };
}
