/**
 * The versioning policy (openapi.yaml, "Versioning"), checked: `breakingChanges(published, current)` lists every way
 * the current document of a version differs from the document as published that a client of the published one could
 * notice. Descriptions, summaries, examples, tags and servers are prose, and never compared.
 */
import {
  type BreakingChange,
  type ComparedDocuments,
  compareSchemas,
  type Direction,
  dereference,
  extensionChanges,
} from './schema-compatibility.js';

export type { BreakingChange } from './schema-compatibility.js';

type Node = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const entriesOf = (value: unknown): [string, unknown][] => (isObject(value) ? Object.entries(value) : []);

/** An operation with what it inherits from its path and the document, under a key that ignores parameter names. */
interface Operation {
  name: string;
  operation: Node;
  parameters: Map<string, Node>;
  security: string[];
}

/** The alternatives of a `security` list, each as the sorted names of its schemes; `''` accepts any caller. */
function securityOf(requirements: unknown): string[] {
  if (!Array.isArray(requirements) || requirements.length === 0) {
    return [''];
  }
  return requirements.map((requirement) =>
    Object.keys(requirement as Node)
      .sort()
      .join(' + '),
  );
}

/** Every operation of a document, keyed by method and path with `{}` for each path parameter. */
function operationsOf(document: Node): Map<string, Operation> {
  const found = new Map<string, Operation>();
  for (const [path, item] of entriesOf(document.paths)) {
    const pathItem = dereference(item, document) as Node;
    for (const method of METHODS.filter((name) => isObject(pathItem[name]))) {
      const operation = pathItem[method] as Node;
      const parameters = new Map<string, Node>();
      for (const list of [pathItem.parameters, operation.parameters]) {
        for (const reference of Array.isArray(list) ? list : []) {
          const parameter = dereference(reference, document) as Node;
          const name = parameter.in === 'header' ? String(parameter.name).toLowerCase() : String(parameter.name);
          parameters.set(`${parameter.in} ${name}`, parameter);
        }
      }
      found.set(`${method} ${path.replace(/\{[^}]*\}/g, '{}')}`, {
        name: `${method.toUpperCase()} ${path}`,
        operation,
        parameters,
        security: securityOf(operation.security ?? document.security),
      });
    }
  }
  return found;
}

/** The changes to one parameter: removed, now required, or accepting less. */
function parameterChanges(
  before: Node | undefined,
  after: Node | undefined,
  where: string,
  documents: ComparedDocuments,
): BreakingChange[] {
  if (!after) {
    return [{ where, change: 'removed' }];
  }
  if (!before) {
    return after.required === true ? [{ where, change: 'a new required parameter' }] : [];
  }
  const found: BreakingChange[] = [];
  if (after.required === true && before.required !== true) {
    found.push({ where, change: 'now required' });
  }
  if (before.allowEmptyValue === true && after.allowEmptyValue !== true) {
    found.push({ where, change: 'no longer accepts an empty value' });
  }
  for (const keyword of ['style', 'explode', 'allowReserved']) {
    if (before[keyword] !== after[keyword] && !(keyword === 'allowReserved' && after[keyword] === true)) {
      found.push({ where, change: `${keyword} changed from ${before[keyword]} to ${after[keyword]}` });
    }
  }
  found.push(...extensionChanges(before, after, where));
  found.push(...compareSchemas(before.schema ?? {}, after.schema ?? {}, 'request', where, documents));
  return found;
}

/** The changes to the JSON (or other) bodies of a request or a response, one schema per media type. */
function contentChanges(
  before: unknown,
  after: unknown,
  direction: Direction,
  where: string,
  documents: ComparedDocuments,
): BreakingChange[] {
  const current = isObject(after) ? after : {};
  return entriesOf(before).flatMap(([mediaType, media]) => {
    const at = `${where} (${mediaType})`;
    if (!isObject(current[mediaType])) {
      return [{ where: at, change: 'media type removed' }];
    }
    const [was, is] = [(media as Node).schema ?? {}, (current[mediaType] as Node).schema ?? {}];
    return compareSchemas(was, is, direction, at, documents);
  });
}

/** The changes to a request body: removed, now required, or accepting less. */
function requestBodyChanges(before: unknown, after: unknown, where: string, documents: ComparedDocuments) {
  const [was, is] = [
    before === undefined ? undefined : (dereference(before, documents.before) as Node),
    after === undefined ? undefined : (dereference(after, documents.after) as Node),
  ];
  if (!was) {
    return is?.required === true ? [{ where, change: 'a new required request body' }] : [];
  }
  if (!is) {
    return [{ where, change: 'removed' }];
  }
  const found: BreakingChange[] = [];
  if (is.required === true && was.required !== true) {
    found.push({ where, change: 'now required' });
  }
  return [...found, ...contentChanges(was.content, is.content, 'request', where, documents)];
}

/** The changes to the responses of an operation: removed statuses, new success statuses, headers and bodies. */
function responseChanges(before: unknown, after: unknown, where: string, documents: ComparedDocuments) {
  const found: BreakingChange[] = [];
  const current = isObject(after) ? after : {};
  for (const status of Object.keys(current).filter((status) => !(isObject(before) && status in before))) {
    if (!(Number(status) >= 400)) {
      found.push({ where: `${where} ${status}`, change: 'a new status that is not an error' });
    }
  }
  for (const [status, response] of entriesOf(before)) {
    const at = `${where} ${status}`;
    if (current[status] === undefined) {
      found.push({ where: at, change: 'status removed' });
      continue;
    }
    const was = dereference(response, documents.before) as Node;
    const is = dereference(current[status], documents.after) as Node;
    const headers = isObject(is.headers) ? is.headers : {};
    for (const [name, header] of entriesOf(was.headers)) {
      const [old, now] = [dereference(header, documents.before) as Node, headers[name]];
      if (now === undefined) {
        found.push({ where: `${at} header ${name}`, change: 'removed' });
        continue;
      }
      const present = dereference(now, documents.after) as Node;
      if (old.required === true && present.required !== true) {
        found.push({ where: `${at} header ${name}`, change: 'may now be missing (no longer required)' });
      }
      found.push(
        ...compareSchemas(old.schema ?? {}, present.schema ?? {}, 'response', `${at} header ${name}`, documents),
      );
    }
    found.push(...contentChanges(was.content, is.content, 'response', `${at} body`, documents));
  }
  return found;
}

/** The changes to one operation that exists in both documents. */
function operationChanges(before: Operation, after: Operation, documents: ComparedDocuments): BreakingChange[] {
  const where = before.name;
  const found: BreakingChange[] = [];
  if (before.operation.operationId !== after.operation.operationId) {
    const change = `operationId changed from ${before.operation.operationId} to ${after.operation.operationId}`;
    found.push({ where, change });
  }
  if (!after.security.includes('')) {
    for (const requirement of before.security.filter((requirement) => !after.security.includes(requirement))) {
      found.push({ where, change: `no longer accepts ${requirement || 'a request without credentials'}` });
    }
  }
  found.push(...extensionChanges(before.operation, after.operation, where));
  for (const key of new Set([...before.parameters.keys(), ...after.parameters.keys()])) {
    const [was, is] = [before.parameters.get(key), after.parameters.get(key)];
    found.push(...parameterChanges(was, is, `${where} parameter ${key}`, documents));
  }
  const body = `${where} request body`;
  found.push(...requestBodyChanges(before.operation.requestBody, after.operation.requestBody, body, documents));
  found.push(...responseChanges(before.operation.responses, after.operation.responses, `${where} response`, documents));
  return found;
}

/** The changes to the security schemes operations name: a scheme that is gone or asks for another credential. */
function securitySchemeChanges(before: Node, after: Node): BreakingChange[] {
  const schemes = (document: Node) =>
    isObject(document.components) && isObject(document.components.securitySchemes)
      ? document.components.securitySchemes
      : {};
  const current = schemes(after);
  return entriesOf(schemes(before)).flatMap(([name, scheme]) => {
    const { description: _was, ...was } = scheme as Node;
    const { description: _is, ...is } = (current[name] ?? {}) as Node;
    const where = `security scheme ${name}`;
    return JSON.stringify(was) === JSON.stringify(is) ? [] : [{ where, change: current[name] ? 'changed' : 'removed' }];
  });
}

/** Every change from the published document of a version to its current one that the versioning policy forbids. */
export function breakingChanges(published: Node, current: Node): BreakingChange[] {
  const documents: ComparedDocuments = { before: published, after: current };
  const operations = operationsOf(current);
  const found: BreakingChange[] = [
    ...extensionChanges(published, current, 'document'),
    ...securitySchemeChanges(published, current),
  ];
  for (const [key, operation] of operationsOf(published)) {
    const now = operations.get(key);
    found.push(...(now ? operationChanges(operation, now, documents) : [{ where: operation.name, change: 'removed' }]));
  }
  return found;
}
