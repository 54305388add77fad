import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, Response } from 'express';
import { quoteOr } from '../domain/quotable.js';
import { HttpError } from './errors/http-error.js';

/** A whole number as the contract writes one: decimal digits, no sign, no leading zero but for `0` itself. */
const PLAIN_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

type Parameter = { name?: string; in?: string; $ref?: string; schema?: { type?: unknown; maximum?: number } };

/** The integer query parameters of the spec, by name, with their maximum. */
function integerQueryParameters(document: OpenApiDocument): Map<string, { maximum?: number | undefined }> {
  const shared = document.components.parameters as Record<string, Parameter>;
  const found = new Map<string, { maximum?: number | undefined }>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as { parameters?: Parameter[] }[]) {
      for (const declared of operation?.parameters ?? []) {
        const parameter = declared.$ref ? shared[declared.$ref.replace('#/components/parameters/', '')] : declared;
        if (parameter?.in === 'query' && parameter.name && parameter.schema?.type === 'integer') {
          found.set(parameter.name, { maximum: parameter.schema.maximum });
        }
      }
    }
  }
  return found;
}

function invalid(name: string, problem: string): HttpError {
  return HttpError.of('invalid_request_error', `${quoteOr(name, 'name', 'query')}: ${problem} (query parameter)`);
}

/** Decodes one part of a query string; undefined when its percent-encoding is not UTF-8. */
function strictDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** The first problem of a raw query string, or undefined when every parameter is well-formed. */
function queryProblem(search: string, integers: Map<string, { maximum?: number | undefined }>): HttpError | undefined {
  const seen = new Set<string>();
  for (const pair of search.split('&')) {
    if (pair === '') {
      continue;
    }
    const equals = pair.indexOf('=');
    const name = strictDecode(equals === -1 ? pair : pair.slice(0, equals));
    const value = strictDecode(equals === -1 ? '' : pair.slice(equals + 1));
    if (name === undefined) {
      return HttpError.of('invalid_request_error', 'query: malformed percent-encoding in a parameter name');
    }
    if (value === undefined) {
      return invalid(name, 'malformed percent-encoding; values are UTF-8');
    }
    if (seen.has(name)) {
      // Without this check the validator reports the array as a type error, which hides what went wrong.
      return invalid(name, 'must be a single value');
    }
    seen.add(name);
    const integer = integers.get(name);
    if (integer && value !== '') {
      if (!PLAIN_DECIMAL.test(value)) {
        return invalid(name, 'must be an integer in plain decimal digits');
      }
      // Beyond the safe integers a number is no longer exact: it is over any maximum the spec can set.
      if (integer.maximum !== undefined && (value.length > 15 || Number(value) > integer.maximum)) {
        return invalid(name, `must be <= ${integer.maximum}`);
      }
    }
  }
  return undefined;
}

/**
 * Takes query parameters exactly as the contract writes them, before the validator (which would coerce `1e3`,
 * `0x10` or ` 5` into numbers, and decode malformed UTF-8 leniently): each name and value must be valid UTF-8
 * percent-encoding, each parameter is given once, and an integer is in plain decimal digits within safe range.
 */
export function strictQueryParameters(document: OpenApiDocument) {
  const integers = integerQueryParameters(document);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const start = req.url.indexOf('?');
    next(start === -1 ? undefined : queryProblem(req.url.slice(start + 1), integers));
  };
}
