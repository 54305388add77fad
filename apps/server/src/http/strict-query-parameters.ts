import { quotable, quoteOr } from '@apikeys/permissions';
import type { OpenApiDocument } from '@apikeys/spec';
import { Router as createRouter, type NextFunction, type Request, type Response } from 'express';
import { expressPath, type SpecOperation, specOperations } from '../spec/spec-operations.js';
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
  /** The array parameters, which are given once per item (`type=a&type=b`). */
  repeatable: Set<string>;
  /** Every name the document declares, whatever its operation. */
  declared: Set<string>;
}

/** A path item of the document, or one of its operations: what declares parameters. */
type Declaring = { parameters?: Parameter[] };

/** The query parameters of one operation of the document, those of its path included. */
interface OperationQuery {
  method: SpecOperation['method'];
  path: string;
  parameters: (Parameter & { name: string })[];
}

function operationQueries(document: OpenApiDocument): OperationQuery[] {
  const shared = document.components.parameters as Record<string, Parameter>;
  const resolve = (declared: Parameter) =>
    declared.$ref ? shared[declared.$ref.replace('#/components/parameters/', '')] : declared;
  return specOperations(document).map(({ method, path }) => {
    const item = document.paths[path] as Record<string, Declaring> & Declaring;
    const operation = item[method] as Declaring;
    const declared = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
    const parameters = declared.filter(
      (parameter): parameter is Parameter & { name: string } => parameter?.in === 'query' && !!parameter.name,
    );
    return { method, path, parameters };
  });
}

/** The rules of every query parameter of the document, whatever its operation. */
function queryRules(operations: OperationQuery[]): QueryRules {
  const rules: QueryRules = { integers: new Map(), repeatable: new Set(), declared: new Set() };
  for (const parameter of operations.flatMap(({ parameters }) => parameters)) {
    rules.declared.add(parameter.name);
    if (parameter.schema?.type === 'integer') {
      rules.integers.set(parameter.name, { maximum: parameter.schema.maximum });
    }
    if (parameter.schema?.type === 'array') {
      rules.repeatable.add(parameter.name);
    }
  }
  return rules;
}

function invalid(name: string, problem: string): HttpError {
  return HttpError.of('invalid_request_error', `${quoteOr(name, 'name', 'query')}: ${problem} (query parameter)`);
}

/**
 * The validator reads a name with brackets as the parameter before them (`type[]=a` as `type=a`, `status[0]=a` as
 * `status=[a]`, qs style), so a name the document does not declare could pass for one it does: such a name is
 * refused here, before the validator sees it. Every other name reaches the validator as sent, which refuses those
 * the request's operation does not declare.
 */
function readAsAnotherName(name: string, declared: ReadonlySet<string>): HttpError | undefined {
  if (!name.includes('[') || declared.has(name)) {
    return undefined;
  }
  const shown = quotable(name, 'bracketedName') ? name : 'query';
  return HttpError.of(
    'invalid_request_error',
    `${shown}: unknown query parameter; names are exact (an array parameter is repeated: name=a&name=b)`,
  );
}

/** Decodes one part of a query string; undefined when its percent-encoding is not UTF-8. */
function strictDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** The name and value of one `name=value` part of a query string, decoded; undefined where malformed. */
function decodePair(pair: string): { name: string | undefined; value: string | undefined } {
  const equals = pair.indexOf('=');
  return {
    name: strictDecode(equals === -1 ? pair : pair.slice(0, equals)),
    value: strictDecode(equals === -1 ? '' : pair.slice(equals + 1)),
  };
}

/** The first problem of a raw query string; undefined when every parameter is well-formed. */
function queryProblem(search: string, rules: QueryRules): HttpError | undefined {
  const seen = new Set<string>();
  for (const pair of search.split('&')) {
    if (pair === '') {
      continue;
    }
    const { name, value } = decodePair(pair);
    if (name === undefined) {
      return HttpError.of('invalid_request_error', 'query: malformed percent-encoding in a parameter name');
    }
    if (value === undefined) {
      return invalid(name, 'malformed percent-encoding; values are UTF-8');
    }
    const unknown = readAsAnotherName(name, rules.declared);
    if (unknown) {
      return unknown;
    }
    if (seen.has(name) && !rules.repeatable.has(name)) {
      // Without this check the validator reports the array as a type error, which hides what went wrong.
      return invalid(name, 'must be a single value');
    }
    seen.add(name);
    const integer = rules.integers.get(name);
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

/** Takes out of a request's URL the parameters of `emptyMeansAbsent` sent with an empty value. */
function dropEmptyParameters(req: Request, emptyMeansAbsent: ReadonlySet<string>): void {
  const start = req.url.indexOf('?');
  if (start === -1) {
    return;
  }
  const pairs = req.url.slice(start + 1).split('&');
  const kept = pairs.filter((pair) => {
    const { name, value } = decodePair(pair);
    return value !== '' || name === undefined || !emptyMeansAbsent.has(name);
  });
  if (kept.length !== pairs.length) {
    // The query is parsed from the URL whenever it is read, so the URL is what loses the empty parameters.
    req.url = kept.length === 0 ? req.url.slice(0, start) : `${req.url.slice(0, start + 1)}${kept.join('&')}`;
  }
}

/**
 * Drops, for the operation a request reaches, the empty parameters it declares `allowEmptyValue`: only there does
 * an empty value mean absent. Elsewhere the parameter stays, for the validator to refuse (an unknown parameter, or
 * an empty value). The router matches paths as the routes and the validator do (strict, case-sensitive).
 */
function emptyMeansAbsent(operations: OperationQuery[]): (req: Request, res: Response, next: NextFunction) => void {
  const router = createRouter({ strict: true, caseSensitive: true });
  for (const { method, path, parameters } of operations) {
    const names = new Set(parameters.filter((parameter) => parameter.allowEmptyValue === true).map((p) => p.name));
    if (names.size > 0) {
      router[method](expressPath(path), (req, _res, next) => {
        dropEmptyParameters(req, names);
        next();
      });
    }
  }
  // A router answers OPTIONS itself for a path it has routes for; OPTIONS is the validator's to refuse (405).
  return (req, res, next) => (req.method === 'OPTIONS' ? next() : router(req, res, next));
}

/** A query with a parameter whose value is empty (`status=`): only such a query needs its operation matched. */
const HAS_EMPTY_VALUE = /=(?:&|$)/;

/**
 * Takes query parameters exactly as the contract writes them, before the validator (which would coerce `1e3`,
 * `0x10` or ` 5` into numbers, and decode malformed UTF-8 leniently): each name and value must be valid UTF-8
 * percent-encoding, each parameter is given once (an array parameter once per item), and an integer is in plain
 * decimal digits within safe range, and a name is exact (no `type[]` for `type`). A parameter the request's operation
 * declares `allowEmptyValue` is dropped when empty, as if it were not sent.
 */
export function strictQueryParameters(document: OpenApiDocument) {
  const operations = operationQueries(document);
  const rules = queryRules(operations);
  const dropEmpty = emptyMeansAbsent(operations);
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = req.url.indexOf('?');
    if (start === -1) {
      next();
      return;
    }
    const search = req.url.slice(start + 1);
    const problem = queryProblem(search, rules);
    if (problem) {
      next(problem);
    } else if (HAS_EMPTY_VALUE.test(search)) {
      dropEmpty(req, res, next);
    } else {
      next();
    }
  };
}
