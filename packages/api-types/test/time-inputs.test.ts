import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import { describe, expect, it } from 'vitest';
import { API_VERSIONS } from '../src/index.js';

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The node a local `$ref` names, or the node itself. */
function resolved(node: Node, document: OpenApiDocument): Node {
  if (typeof node.$ref !== 'string') {
    return node;
  }
  let target: unknown = document;
  for (const part of node.$ref.replace(/^#\//, '').split('/')) {
    target = isNode(target) ? target[part] : undefined;
  }
  return resolved(target as Node, document);
}

/** The pattern of every `date-time` string a schema may hold, each with where it is. */
function dateTimePatterns(schema: unknown, document: OpenApiDocument, where: string, seen = new Set<Node>()) {
  const found: { where: string; pattern: unknown }[] = [];
  if (!isNode(schema)) {
    return found;
  }
  const node = resolved(schema, document);
  if (seen.has(node)) {
    return found;
  }
  seen.add(node);
  const members = ['allOf', 'anyOf', 'oneOf'].flatMap((key) => (Array.isArray(node[key]) ? node[key] : []));
  if (node.format === 'date-time') {
    // A member (`allOf: [DateTimeInput]`) may give the pattern; the node's own comes first.
    const pattern = node.pattern ?? members.map((member) => resolved(member as Node, document).pattern).find(Boolean);
    found.push({ where, pattern });
  }
  for (const member of members) {
    found.push(...dateTimePatterns(member, document, where, seen));
  }
  for (const [name, property] of Object.entries(isNode(node.properties) ? node.properties : {})) {
    found.push(...dateTimePatterns(property, document, `${where}.${name}`, seen));
  }
  found.push(...dateTimePatterns(node.items, document, `${where}[]`, seen));
  return found;
}

/** Every time a request of the document may send (parameters and bodies), and every time a response may hold. */
function timesOf(document: OpenApiDocument) {
  const requests: { where: string; pattern: unknown }[] = [];
  const responses: { where: string; pattern: unknown }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Node).filter(([, value]) => isNode(value))) {
      const at = `${method.toUpperCase()} ${path}`;
      const { parameters = [], requestBody, responses: answers = {} } = operation as Node;
      for (const parameter of [
        ...(((item as Node).parameters as Node[] | undefined) ?? []),
        ...(parameters as Node[]),
      ]) {
        const { name, schema } = resolved(parameter, document);
        requests.push(...dateTimePatterns(schema, document, `${at} parameter ${name}`));
      }
      for (const [type, media] of Object.entries(
        isNode(requestBody) ? (resolved(requestBody, document).content as Node) : {},
      )) {
        requests.push(...dateTimePatterns((media as Node).schema, document, `${at} request body (${type})`));
      }
      for (const [status, response] of Object.entries(answers as Node)) {
        for (const media of Object.values((resolved(response as Node, document).content ?? {}) as Node)) {
          responses.push(...dateTimePatterns((media as Node).schema, document, `${at} response ${status}`));
        }
      }
    }
  }
  return { requests, responses };
}

// Inputs take any RFC 3339 time with 0 to 6 fractional digits (`DateTimeInput`); outputs always write six digits in
// UTC (`Timestamp`). A time a request takes that is written as an output (as `KeyUse.used_at` once was) is caught.
describe.each(API_VERSIONS)('the times of %s', (version) => {
  const document = loadSpec(version);
  const schemas = loadSpec(API_VERSIONS.at(-1) ?? version).components.schemas as Record<string, Node>;
  const { requests, responses } = timesOf(document);

  it('in requests are each a DateTimeInput', () => {
    expect(requests.filter(({ pattern }) => pattern !== schemas.DateTimeInput?.pattern)).toEqual([]);
    expect(requests.length > 0 || version === API_VERSIONS[0]).toBe(true);
  });

  it('in responses are each a Timestamp', () => {
    expect(responses.filter(({ pattern }) => pattern !== schemas.Timestamp?.pattern)).toEqual([]);
    expect(responses.length).toBeGreaterThan(0);
  });
});
