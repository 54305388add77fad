import { PERMISSION_QUERY } from '@apikeys/api-types';
import { type HeldPermissions, holdsAnyOf } from './held-permissions.js';
import { namesGranting } from './permission-names.js';
import { PermissionQueryError } from './permission-query-error.js';
import { type Token, Tokens } from './permission-query-tokens.js';

/** A parsed permission query: a name, or `AND`/`OR` over two or more operands. */
export type PermissionQueryNode =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly PermissionQueryNode[] };

type Test = (held: HeldPermissions) => boolean;

/** A parsed `PermissionQuery`, compiled once for fast evaluation. Made by `parsePermissionQuery`. */
export class PermissionQuery {
  readonly #test: Test;

  constructor(
    /** The query as written. */
    readonly text: string,
    /** Its syntax tree; `AND` binds tighter than `OR`. */
    readonly root: PermissionQueryNode,
  ) {
    this.#test = compile(root);
  }

  /** Whether a key holding `held` satisfies the query. */
  isSatisfiedBy(held: HeldPermissions): boolean {
    return this.#test(held);
  }
}

/** Whether a key holding `held` satisfies `query`. */
export function satisfiesPermissionQuery(query: PermissionQuery, held: HeldPermissions): boolean {
  return query.isSatisfiedBy(held);
}

/** Parses a `PermissionQuery`; throws `PermissionQueryError` naming the position of the first problem. */
export function parsePermissionQuery(text: string): PermissionQuery {
  if (text.length > PERMISSION_QUERY.maxLength) {
    throw new PermissionQueryError(
      `the query is longer than ${PERMISSION_QUERY.maxLength} characters`,
      PERMISSION_QUERY.maxLength + 1,
    );
  }
  const tokens = new Tokens(text);
  if (tokens.current.kind === 'end') {
    throw new PermissionQueryError('the query is empty', 1);
  }
  const root = parseOr(tokens, 0);
  const rest = tokens.current;
  if (rest.kind !== 'end') {
    throw new PermissionQueryError(rest.kind === 'close' ? 'unexpected ")"' : 'expected "AND" or "OR"', rest.position);
  }
  return new PermissionQuery(text, root);
}

/** `or := and ("OR" and)*` */
function parseOr(tokens: Tokens, depth: number): PermissionQueryNode {
  const operands = [parseAnd(tokens, depth)];
  while (tokens.current.kind === 'or') {
    tokens.advance();
    operands.push(parseAnd(tokens, depth));
  }
  return operands.length === 1 ? (operands[0] as PermissionQueryNode) : { kind: 'or', operands };
}

/** `and := primary ("AND" primary)*` */
function parseAnd(tokens: Tokens, depth: number): PermissionQueryNode {
  const operands = [parsePrimary(tokens, depth)];
  while (tokens.current.kind === 'and') {
    tokens.advance();
    operands.push(parsePrimary(tokens, depth));
  }
  return operands.length === 1 ? (operands[0] as PermissionQueryNode) : { kind: 'and', operands };
}

/** `primary := NAME | "(" or ")"`; `depth` counts the parentheses already open. */
function parsePrimary(tokens: Tokens, depth: number): PermissionQueryNode {
  const token = tokens.current;
  if (token.kind === 'name') {
    tokens.advance();
    return { kind: 'name', name: token.text };
  }
  if (token.kind !== 'open') {
    throw new PermissionQueryError('expected a permission name or "("', token.position);
  }
  if (depth === PERMISSION_QUERY.maxNesting) {
    throw new PermissionQueryError(`more than ${PERMISSION_QUERY.maxNesting} levels of parentheses`, token.position);
  }
  tokens.advance();
  const inner = parseOr(tokens, depth + 1);
  expectClose(tokens.current, token);
  tokens.advance();
  return inner;
}

function expectClose(token: Token, open: Token): void {
  if (token.kind === 'end') {
    throw new PermissionQueryError('"(" is never closed', open.position);
  }
  if (token.kind !== 'close') {
    throw new PermissionQueryError('expected "AND", "OR" or ")"', token.position);
  }
}

/** Turns a syntax tree into closures: a name becomes a few set lookups, with no allocation per evaluation. */
function compile(node: PermissionQueryNode): Test {
  if (node.kind === 'name') {
    const granting = namesGranting(node.name);
    return (held) => holdsAnyOf(held, granting);
  }
  const tests = node.operands.map(compile);
  if (node.kind === 'and') {
    return (held) => {
      for (let i = 0; i < tests.length; i++) {
        if (!(tests[i] as Test)(held)) {
          return false;
        }
      }
      return true;
    };
  }
  return (held) => {
    for (let i = 0; i < tests.length; i++) {
      if ((tests[i] as Test)(held)) {
        return true;
      }
    }
    return false;
  };
}
