import { quotable } from './quotable.js';

/**
 * The largest magnitude of a metadata number: 2^53 − 1. Up to it a double holds every integer exactly; beyond it,
 * a JSON parser that reads numbers as doubles (JavaScript's, the server's) turns `9007199254740993` into
 * `9007199254740992`, and `1e400` into Infinity, which JSON writes as `null`.
 */
const LARGEST_MAGNITUDE = Number.MAX_SAFE_INTEGER;

/** What a metadata number must be, as a refusal says it. */
const NUMBER_RULE = `a number must be finite and within ±${LARGEST_MAGNITUDE} (2^53 − 1); send larger ones as strings`;

/** A value met while walking metadata: its key or index, and the entry of the value that holds it. */
interface Visit {
  value: unknown;
  key?: string | number;
  parent?: Visit;
}

/**
 * Where a visited value is, as a message may name it: `metadata.limits.rps`, `metadata.tags[2]`; `metadata` alone
 * when a key on the way may not be repeated (`quotable`).
 */
function named(visit: Visit): string {
  const path: (string | number)[] = [];
  for (let current: Visit | undefined = visit; current?.key !== undefined; current = current.parent) {
    path.push(current.key);
  }
  path.reverse();
  if (!path.every((key) => typeof key === 'number' || quotable(key, 'key'))) {
    return 'metadata';
  }
  return path.reduce<string>(
    (name, key) => (typeof key === 'number' ? `${name}[${key}]` : `${name}.${key}`),
    'metadata',
  );
}

/**
 * Why a number of `metadata` would not come back as it was sent (naming where it is, the first in the order JSON
 * writes them), or undefined. `-0` is accepted: it comes back as `0`, the same number. It walks with a stack of its
 * own, so that no nesting exhausts the call stack.
 */
export function metadataNumberProblem(metadata: object): string | undefined {
  const pending: Visit[] = [{ value: metadata }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { value } = visit;
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || Math.abs(value) > LARGEST_MAGNITUDE) {
        return `${named(visit)}: ${NUMBER_RULE}`;
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        pending.push({ value: value[index], key: index, parent: visit });
      }
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, inner] = entries[index] as [string, unknown];
        pending.push({ value: inner, key, parent: visit });
      }
    }
  }
  return undefined;
}
