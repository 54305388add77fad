/**
 * The documents of each API version, derived from the one hand-written source (openapi.yaml). The source describes
 * the latest version; annotations say how each node differs in other versions:
 *
 * - `x-since: V`: the node exists from version V on;
 * - `x-removed-in: V`: the node exists only in versions before V;
 * - `x-versions: {V: patch}`: in version V the node is the JSON merge patch (RFC 7396) of itself with `patch`;
 * - `x-extends: <ref>` (on a schema): the referenced object schema's properties and required names, then its own.
 *
 * A node dropped from a version takes with it the references to it that lists and maps hold, and the names of
 * dropped properties leave `required`. A reference to a node that the source does not have at all is an error.
 */

/** A parsed JSON value. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const ANNOTATIONS = ['x-since', 'x-removed-in', 'x-versions', 'x-extends', 'x-api-versions'];

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7396: objects merge key by key, `null` removes a key, anything else replaces the target. */
function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) {
    return patch;
  }
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      result[key] = mergePatch(result[key] ?? null, value);
    }
  }
  return result;
}

/** The versions the source declares (`x-api-versions`), oldest first. */
export function declaredVersions(source: JsonObject): string[] {
  const versions = source['x-api-versions'];
  if (!Array.isArray(versions) || versions.length === 0 || !versions.every((v) => typeof v === 'string')) {
    throw new Error('openapi.yaml: x-api-versions must list the API versions, oldest first');
  }
  return versions as string[];
}

/** Derives the document of `version` from the source; the source is not changed. */
export function deriveVersion(source: JsonObject, version: string): JsonObject {
  const versions = declaredVersions(source);
  const rank = (of: Json | undefined, where: string): number => {
    const index = typeof of === 'string' ? versions.indexOf(of) : -1;
    if (index === -1) {
      throw new Error(`openapi.yaml: ${where} names ${JSON.stringify(of)}, which x-api-versions does not list`);
    }
    return index;
  };
  const current = rank(version, 'the requested version');

  /** Whether the node exists in this version. */
  const exists = (node: Json, where: string): boolean => {
    if (!isObject(node)) {
      return true;
    }
    if (node['x-since'] !== undefined && rank(node['x-since'], `${where} x-since`) > current) {
      return false;
    }
    return !(node['x-removed-in'] !== undefined && rank(node['x-removed-in'], `${where} x-removed-in`) <= current);
  };

  /** The node as this version has it: patched, without dropped children, without annotations. */
  const derive = (node: Json, where: string): Json => {
    if (Array.isArray(node)) {
      return node.filter((item, i) => exists(item, `${where}[${i}]`)).map((item, i) => derive(item, `${where}[${i}]`));
    }
    if (!isObject(node)) {
      return node;
    }
    let patched: Json = node;
    const patches = node['x-versions'];
    if (patches !== undefined) {
      if (!isObject(patches)) {
        throw new Error(`openapi.yaml: ${where} x-versions must map versions to patches`);
      }
      for (const key of Object.keys(patches)) {
        rank(key, `${where} x-versions`);
      }
      const patch = patches[version];
      if (patch !== undefined) {
        patched = mergePatch(node, patch);
      }
    }
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(patched as JsonObject)) {
      if (ANNOTATIONS.includes(key) && key !== 'x-extends') {
        continue;
      }
      if (exists(value, `${where}.${key}`)) {
        result[key] = derive(value, `${where}.${key}`);
      }
    }
    return result;
  };

  const document = derive(source, '#') as JsonObject;
  const resolved = dropDanglingReferences(document, source);
  return expandExtends(resolved);
}

/** The node a local reference (`#/components/schemas/ApiKey`) points at, or undefined. */
function resolve(document: JsonObject, ref: string): Json | undefined {
  let node: Json | undefined = document;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    node = isObject(node) ? node[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  return node;
}

/**
 * Drops list items and map entries that reference a node this version does not have, and the names of properties
 * no longer present from `required`; throws on a reference to a node the source does not have either (a typo).
 */
function dropDanglingReferences(document: JsonObject, source: JsonObject): JsonObject {
  const dangling = (node: Json, where: string): boolean => {
    if (!isObject(node) || typeof node.$ref !== 'string' || resolve(document, node.$ref) !== undefined) {
      return false;
    }
    if (resolve(source, node.$ref) === undefined) {
      throw new Error(`openapi.yaml: ${where} refers to ${node.$ref}, which does not exist`);
    }
    return true;
  };
  const walk = (node: Json, where: string): Json => {
    if (Array.isArray(node)) {
      return node.filter((item, i) => !dangling(item, `${where}[${i}]`)).map((item, i) => walk(item, `${where}[${i}]`));
    }
    if (!isObject(node)) {
      return node;
    }
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (!dangling(value, `${where}.${key}`)) {
        result[key] = walk(value, `${where}.${key}`);
      }
    }
    if (Array.isArray(result.required) && isObject(result.properties)) {
      const properties = result.properties;
      result.required = result.required.filter((name) => typeof name === 'string' && name in properties);
    }
    return result;
  };
  return walk(document, '#') as JsonObject;
}

/** Replaces each `x-extends` with the referenced schema's properties and required names, followed by its own. */
function expandExtends(document: JsonObject): JsonObject {
  const expand = (node: Json, seen: string[]): Json => {
    if (Array.isArray(node)) {
      return node.map((item) => expand(item, seen));
    }
    if (!isObject(node)) {
      return node;
    }
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'x-extends') {
        result[key] = expand(value, seen);
      }
    }
    const base = node['x-extends'];
    if (base === undefined) {
      return result;
    }
    if (typeof base !== 'string' || seen.includes(base)) {
      throw new Error(`openapi.yaml: x-extends ${JSON.stringify(base)} is not a reference, or extends itself`);
    }
    const target = expand(resolve(document, base) ?? null, [...seen, base]);
    if (!isObject(target) || !isObject(target.properties)) {
      throw new Error(`openapi.yaml: x-extends ${base} does not name an object schema of this version`);
    }
    const own = isObject(result.properties) ? result.properties : {};
    const required = [target.required, result.required].flatMap((names) => (Array.isArray(names) ? names : []));
    return { ...result, required, properties: { ...target.properties, ...own } };
  };
  return expand(document, []) as JsonObject;
}
