import { isPermissionName } from './permission-names.js';
import { PermissionQueryError } from './permission-query-error.js';
import { quotable } from './quotable.js';

/** One token of a permission query; `position` is 1-based, and the end's is one past the last character. */
export interface Token {
  readonly kind: 'name' | 'and' | 'or' | 'open' | 'close' | 'end';
  readonly text: string;
  readonly position: number;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a;
}

/** Letters of either case (so `And` and `Docs.read` are read whole and refused as names), digits, `_-.*`. */
function isWordCharacter(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x2d ||
    code === 0x2e ||
    code === 0x2a
  );
}

/** Reads a query's tokens one at a time, so that problems are reported in the order they appear. */
export class Tokens {
  readonly #text: string;
  #index = 0;
  #current: Token;

  constructor(text: string) {
    this.#text = text;
    this.#current = this.#read();
  }

  /** The token under the cursor. */
  get current(): Token {
    return this.#current;
  }

  /** Moves past the current token. */
  advance(): void {
    this.#current = this.#read();
  }

  #read(): Token {
    const text = this.#text;
    let start = this.#index;
    while (start < text.length && isSpace(text.charCodeAt(start))) {
      start++;
    }
    const position = start + 1;
    if (start === text.length) {
      this.#index = start;
      return { kind: 'end', text: '', position };
    }
    const code = text.charCodeAt(start);
    if (code === 0x28 || code === 0x29) {
      this.#index = start + 1;
      return { kind: code === 0x28 ? 'open' : 'close', text: text[start] as string, position };
    }
    let end = start;
    while (end < text.length && isWordCharacter(text.charCodeAt(end))) {
      end++;
    }
    if (end === start) {
      const character = String.fromCodePoint(text.codePointAt(start) as number);
      const shown = quotable(character, 'character') ? ` ${JSON.stringify(character)}` : '';
      throw new PermissionQueryError(`unexpected character${shown}`, position);
    }
    this.#index = end;
    const word = text.slice(start, end);
    if (word === 'AND' || word === 'OR') {
      return { kind: word === 'AND' ? 'and' : 'or', text: word, position };
    }
    if (!isPermissionName(word)) {
      const shown = quotable(word, 'word')
        ? JSON.stringify(word)
        : 'a word (not repeated: it has the form of a secret)';
      throw new PermissionQueryError(`${shown} is not a permission name (see PermissionName)`, position);
    }
    return { kind: 'name', text: word, position };
  }
}
