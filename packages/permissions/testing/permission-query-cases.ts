import { PERMISSION_QUERY } from '@apikeys/api-types';

/** One evaluation: a key holding `held` satisfies `query` or not. */
export interface PermissionQueryCase {
  readonly query: string;
  readonly held: readonly string[];
  readonly expected: boolean;
}

/** One malformed query: the 1-based position of its first problem, and the reason given. */
export interface MalformedPermissionQueryCase {
  readonly query: string;
  readonly position: number;
  readonly reason: string;
}

const { maxLength, maxNesting } = PERMISSION_QUERY;

/** The reason given for a word of a secret's form, which is never repeated. */
const SECRET_WORD = 'a word (not repeated: it has the form of a secret) is not a permission name (see PermissionName)';
/** A secret's random part: 43 letters and digits. */
const RANDOM_PART = `${'Ab3dE'.repeat(8)}fGh`;

/** A valid query exactly `maxLength` characters long: `a OR a OR … OR b`, padded with spaces. */
const LONGEST_QUERY = `${'a OR '.repeat(Math.floor((maxLength - 1) / 5))}b`.padEnd(maxLength, ' ');

/** `name` inside `levels` pairs of parentheses. */
function nested(levels: number, name: string): string {
  return `${'('.repeat(levels)}${name}${')'.repeat(levels)}`;
}

/**
 * The evaluator's semantics, for every implementation of `PermissionQuery` (the server's, and the client's
 * caching verifier, which runs this same table).
 */
export const PERMISSION_QUERY_CASES: readonly PermissionQueryCase[] = [
  // A name and the wildcards over it.
  { query: 'documents.read', held: ['documents.read'], expected: true },
  { query: 'documents.read', held: ['*'], expected: true },
  { query: 'documents.read', held: ['documents.*'], expected: true },
  { query: 'documents.drafts.write', held: ['documents.*'], expected: true },
  { query: 'documents.drafts.write', held: ['documents.drafts.*'], expected: true },
  { query: 'documents.drafts.write', held: ['billing.read', 'documents.drafts.*'], expected: true },
  { query: 'documents.drafts.write', held: ['documents.read.*'], expected: false },
  { query: 'documents.drafts.write', held: ['documents.drafts'], expected: false },
  { query: 'documents.read', held: ['documents'], expected: false },
  { query: 'documents', held: ['documents.*'], expected: false },
  // Names that only share a prefix.
  { query: 'documentsx.read', held: ['documents.*'], expected: false },
  { query: 'documents.read', held: ['doc.*'], expected: false },
  { query: 'documents.reader', held: ['documents.read'], expected: false },
  { query: 'documents.read', held: ['documents.reader'], expected: false },
  { query: 'documents.read', held: ['documents.read.*'], expected: false },
  // Wildcards required: only the same wildcard or a broader one grants them.
  { query: 'documents.*', held: ['documents.*'], expected: true },
  { query: 'documents.*', held: ['*'], expected: true },
  { query: 'documents.*', held: ['documents.read'], expected: false },
  { query: 'documents.*', held: ['documents.drafts.*'], expected: false },
  { query: 'documents.drafts.*', held: ['documents.*'], expected: true },
  { query: '*', held: ['*'], expected: true },
  { query: '*', held: ['documents.*'], expected: false },
  // A key without permissions satisfies no name.
  { query: 'documents.read', held: [], expected: false },
  { query: '*', held: [], expected: false },
  { query: 'a OR b', held: [], expected: false },
  // AND binds tighter than OR; parentheses override it.
  { query: 'a OR b AND c', held: ['a'], expected: true },
  { query: 'a OR b AND c', held: ['b'], expected: false },
  { query: 'a OR b AND c', held: ['b', 'c'], expected: true },
  { query: 'a AND b OR c', held: ['c'], expected: true },
  { query: 'a AND b OR c', held: ['a'], expected: false },
  { query: '(a OR b) AND c', held: ['a'], expected: false },
  { query: '(a OR b) AND c', held: ['a', 'c'], expected: true },
  { query: 'a AND (b OR c)', held: ['c'], expected: false },
  { query: 'a AND (b OR c)', held: ['a', 'c'], expected: true },
  { query: 'a AND b AND c', held: ['a', 'b'], expected: false },
  { query: 'a AND b AND c', held: ['c', 'b', 'a'], expected: true },
  { query: 'a OR b OR c', held: ['c'], expected: true },
  { query: 'documents.read AND (documents.write OR admin.*)', held: ['documents.read', 'admin.*'], expected: true },
  {
    query: 'documents.read AND (documents.write OR admin.*)',
    held: ['documents.read', 'admin.users'],
    expected: false,
  },
  { query: 'documents.read AND (documents.write OR admin.*)', held: ['documents.*'], expected: true },
  { query: 'documents.read AND (documents.write OR admin.*)', held: ['documents.write', 'admin.*'], expected: false },
  { query: 'documents.read AND (documents.write OR admin.*)', held: ['*'], expected: true },
  // The same name twice, in the query or in the key.
  { query: 'a AND a', held: ['a'], expected: true },
  { query: 'a AND a', held: ['b'], expected: false },
  { query: 'a OR a', held: [], expected: false },
  { query: 'a', held: ['a', 'a'], expected: true },
  // Lower-case `and` and `or` are names, not operators.
  { query: 'and OR or', held: ['or'], expected: true },
  { query: 'and AND or', held: ['and'], expected: false },
  // Whitespace: spaces, tabs and newlines, or none next to a parenthesis.
  { query: '  a\tAND\n(b OR c)  ', held: ['a', 'b'], expected: true },
  { query: 'a\nOR\tb', held: ['b'], expected: true },
  { query: 'a AND(b)', held: ['a', 'b'], expected: true },
  { query: '(a)AND(b)', held: ['a', 'b'], expected: true },
  { query: '(a)AND(b)', held: ['a'], expected: false },
  { query: '(((a)))', held: ['a'], expected: true },
  // The limits, exactly reached.
  { query: LONGEST_QUERY, held: ['b'], expected: true },
  { query: LONGEST_QUERY, held: ['c'], expected: false },
  { query: nested(maxNesting, 'a'), held: ['a'], expected: true },
  { query: `${nested(maxNesting, 'a')} AND ${nested(maxNesting, 'b')}`, held: ['a'], expected: false },
];

/** Malformed queries: each is refused at the position of its first problem. */
export const MALFORMED_PERMISSION_QUERY_CASES: readonly MalformedPermissionQueryCase[] = [
  { query: '', position: 1, reason: 'the query is empty' },
  { query: ' \t\n', position: 1, reason: 'the query is empty' },
  { query: 'documents.read AND', position: 19, reason: 'expected a permission name or "("' },
  { query: 'documents.read AND OR admin.*', position: 20, reason: 'expected a permission name or "("' },
  { query: 'AND a', position: 1, reason: 'expected a permission name or "("' },
  { query: ')', position: 1, reason: 'expected a permission name or "("' },
  { query: '()', position: 2, reason: 'expected a permission name or "("' },
  { query: 'a OR b)', position: 7, reason: 'unexpected ")"' },
  { query: 'a OR (b AND c))', position: 15, reason: 'unexpected ")"' },
  { query: 'a AND (b', position: 7, reason: '"(" is never closed' },
  { query: '((a)', position: 1, reason: '"(" is never closed' },
  { query: 'a b', position: 3, reason: 'expected "AND" or "OR"' },
  { query: 'a and b', position: 3, reason: 'expected "AND" or "OR"' },
  { query: 'a(b)', position: 2, reason: 'expected "AND" or "OR"' },
  { query: '(a b)', position: 4, reason: 'expected "AND", "OR" or ")"' },
  { query: 'Documents.read', position: 1, reason: '"Documents.read" is not a permission name (see PermissionName)' },
  { query: 'a And b', position: 3, reason: '"And" is not a permission name (see PermissionName)' },
  { query: 'a AND b..c', position: 7, reason: '"b..c" is not a permission name (see PermissionName)' },
  { query: 'documents.', position: 1, reason: '"documents." is not a permission name (see PermissionName)' },
  { query: '*.read', position: 1, reason: '"*.read" is not a permission name (see PermissionName)' },
  { query: 'a.*.b', position: 1, reason: '"a.*.b" is not a permission name (see PermissionName)' },
  // A secret sent here by mistake is never repeated: not whole, not inside a longer word, not without its prefix.
  { query: `sk-api-${RANDOM_PART}`, position: 1, reason: SECRET_WORD },
  { query: `documents.read OR sk-adm-${RANDOM_PART}x9Y8z7`, position: 19, reason: SECRET_WORD },
  { query: `(a AND xsk-vfy-${RANDOM_PART}.read)`, position: 8, reason: SECRET_WORD },
  { query: `apikey_${RANDOM_PART}`, position: 1, reason: SECRET_WORD },
  { query: 'a && b', position: 3, reason: 'unexpected character "&"' },
  { query: 'docs.réad', position: 7, reason: 'unexpected character "é"' },
  { query: 'a AND 😀', position: 7, reason: 'unexpected character "😀"' },
  { query: 'a\r\nOR b', position: 2, reason: 'unexpected character "\\r"' },
  { query: 'a\u00a0OR b', position: 2, reason: 'unexpected character "\u00a0"' },
  // The first problem is the one reported, even when a later one is worse.
  { query: 'a ) Docs', position: 3, reason: 'unexpected ")"' },
  // The limits, one past.
  { query: `${LONGEST_QUERY} `, position: maxLength + 1, reason: `the query is longer than ${maxLength} characters` },
  {
    query: 'a'.repeat(maxLength + 1),
    position: maxLength + 1,
    reason: `the query is longer than ${maxLength} characters`,
  },
  {
    query: nested(maxNesting + 1, 'a'),
    position: maxNesting + 1,
    reason: `more than ${maxNesting} levels of parentheses`,
  },
  {
    query: `a AND ${nested(maxNesting + 1, 'a')}`,
    position: 'a AND '.length + maxNesting + 1,
    reason: `more than ${maxNesting} levels of parentheses`,
  },
];
