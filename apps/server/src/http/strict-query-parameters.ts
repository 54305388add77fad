import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, Response } from 'express';
import { quoteOr } from '../domain/quotable.js';
import { HttpError } from './errors/http-error.js';

/** A whole number as the contract writes one: decimal digits, no sign, no leading zero but for `0` itself. */
const PLAIN_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

type Parameter = {
  name?: string;
  in?: string;
  $ref?: string;
  allowEmptyValue?: boolean;
  schema?: { type?: unknown; maximum?: number };
};

/** What the document says of its query parameters that this stage checks. */
interface QueryRules {
  /** The integer parameters, by name, with their maximum. */
  integers: Map<string, { maximum?: number | undefined }>;
  /** The parameters declared `allowEmptyValue`, whose empty value means the parameter is absent. */
  emptyMeansAbsent: Set<string>;
  /** The array parameters, which are given once per item (`type=a&type=b`). */
  repeatable: Set<string>;
}

function queryRules(document: OpenApiDocument): QueryRules {
  const shared = document.components.parameters as Record<string, Parameter>;
  const rules: QueryRules = { integers: new Map(), emptyMeansAbsent: new Set(), repeatable: new Set() };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as { parameters?: Parameter[] }[]) {
      for (const declared of operation?.parameters ?? []) {
        const parameter = declared.$ref ? shared[declared.$ref.replace('#/components/parameters/', '')] : declared;
        if (parameter?.in !== 'query' || !parameter.name) {
          continue;
        }
        if (parameter.schema?.type === 'integer') {
          rules.integers.set(parameter.name, { maximum: parameter.schema.maximum });
        }
        if (parameter.schema?.type === 'array') {
          rules.repeatable.add(parameter.name);
        }
        if (parameter.allowEmptyValue === true) {
          rules.emptyMeansAbsent.add(parameter.name);
        }
      }
    }
  }
  return rules;
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

/**
 * The first problem of a raw query string, or the query string without the empty parameters that mean absent
 * (`undefined` when there are none) once every parameter is well-formed.
 */
function checkQuery(search: string, rules: QueryRules): { problem: HttpError } | { kept: string | undefined } {
  const seen = new Set<string>();
  const pairs = search.split('&');
  const kept: string[] = [];
  for (const pair of pairs) {
    if (pair === '') {
      continue;
    }
    const equals = pair.indexOf('=');
    const name = strictDecode(equals === -1 ? pair : pair.slice(0, equals));
    const value = strictDecode(equals === -1 ? '' : pair.slice(equals + 1));
    if (name === undefined) {
      return {
        problem: HttpError.of('invalid_request_error', 'query: malformed percent-encoding in a parameter name'),
      };
    }
    if (value === undefined) {
      return { problem: invalid(name, 'malformed percent-encoding; values are UTF-8') };
    }
    if (seen.has(name) && !rules.repeatable.has(name)) {
      // Without this check the validator reports the array as a type error, which hides what went wrong.
      return { problem: invalid(name, 'must be a single value') };
    }
    seen.add(name);
    const integer = rules.integers.get(name);
    if (integer && value !== '') {
      if (!PLAIN_DECIMAL.test(value)) {
        return { problem: invalid(name, 'must be an integer in plain decimal digits') };
      }
      // Beyond the safe integers a number is no longer exact: it is over any maximum the spec can set.
      if (integer.maximum !== undefined && (value.length > 15 || Number(value) > integer.maximum)) {
        return { problem: invalid(name, `must be <= ${integer.maximum}`) };
      }
    }
    if (value !== '' || !rules.emptyMeansAbsent.has(name)) {
      kept.push(pair);
    }
  }
  return { kept: kept.length === pairs.length ? undefined : kept.join('&') };
}

/**
 * Takes query parameters exactly as the contract writes them, before the validator (which would coerce `1e3`,
 * `0x10` or ` 5` into numbers, and decode malformed UTF-8 leniently): each name and value must be valid UTF-8
 * percent-encoding, each parameter is given once (an array parameter once per item), and an integer is in plain
 * decimal digits within safe range. A parameter the document declares `allowEmptyValue` is dropped when empty, as if
 * it were not sent.
 */
export function strictQueryParameters(document: OpenApiDocument) {
  const rules = queryRules(document);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const start = req.url.indexOf('?');
    if (start === -1) {
      next();
      return;
    }
    const checked = checkQuery(req.url.slice(start + 1), rules);
    if ('problem' in checked) {
      next(checked.problem);
      return;
    }
    if (checked.kept !== undefined) {
      // The query is parsed from the URL whenever it is read, so the URL is what loses the empty parameters.
      req.url = checked.kept === '' ? req.url.slice(0, start) : `${req.url.slice(0, start + 1)}${checked.kept}`;
    }
    next();
  };
}
