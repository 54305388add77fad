import { SECRET_PREFIX, SECRET_RANDOM_LENGTH } from './secret-form.js';

/**
 * The one rule of what an error message may repeat of a client's value, for the server and for every package that
 * words a refusal (the permission grammar, the key attribute checks). A value is repeated only when it has the
 * shape of its field and holds nothing of a secret's form, so that a secret sent in the wrong place never comes back.
 */
const SHAPES = {
  /** An identifier: a lowercase prefix, `_`, and letters and digits (`apikey_01HZX3Q8K2M4N6P8R0T2V4W6`). */
  id: /^[a-z][a-z0-9]*_[A-Za-z0-9]{1,64}$/,
  /** A parameter or field name, or a path segment of the API: lowercase letters, digits and `_`. */
  name: /^[a-z_][a-z0-9_]{0,63}$/,
  /** A name with brackets, as some clients write an array or a map: `type[]`, `status[0]`, `filter[name]`. */
  bracketedName: /^[a-z_][a-z0-9_]{0,63}(?:\[[a-z0-9_]{0,64}\]){1,4}$/,
  /** An API version: a date. */
  date: /^\d{4}-\d{2}-\d{2}$/,
  /** A word of a permission requirement or list, as its grammar reads words: letters, digits and `_-.*`. */
  word: /^[A-Za-z0-9_.*-]+$/,
  /** One character of a permission requirement that no word or operator is made of. */
  character: /^.$/su,
  /** A key of metadata: letters, digits, `_` and `-`, beginning with a letter or `_` (`customerId`, `plan-tier`). */
  key: /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/,
  /** A file name of a build: letters, digits and `_.-` (`index-B2x9Qm1a.js`). */
  file: /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/,
} as const;

/** A shape of a field, which a value must have before an error message may repeat it. */
export type QuotableShape = keyof typeof SHAPES;

// A secret's prefix, anywhere (a secret inside a longer word) and in any letter case.
const SECRET_PREFIXES = new RegExp(Object.values(SECRET_PREFIX).join('|'), 'i');
// A secret's random part without its prefix: a run of at least as many letters and digits, with an upper-case letter
// in it, as random base62 has (43 of them all in lower case come once in 10^10), and as a lower-case name has not.
const RANDOM_PART = new RegExp(`(?<![A-Za-z0-9])(?=[A-Za-z0-9]{${SECRET_RANDOM_LENGTH}})[a-z0-9]*[A-Z]`);

/**
 * Whether `text` holds anything of a secret's form: a secret's prefix (`sk-adm-`, `sk-api-`, `sk-vfy-`) anywhere, or
 * what looks like a secret's random part (43 letters and digits in a row, not all in lower case). Such a text is
 * never repeated, whatever its field.
 */
export function holdsSecretForm(text: string): boolean {
  return SECRET_PREFIXES.test(text) || RANDOM_PART.test(text);
}

/** Whether `value` has the shape of its field and nothing of a secret's form, so that an error message may quote it. */
export function quotable(value: string, shape: QuotableShape): boolean {
  return SHAPES[shape].test(value) && !holdsSecretForm(value);
}

/** `value` when an error message may quote it (`quotable`), else `fallback`. */
export function quoteOr(value: string, shape: QuotableShape, fallback: string): string {
  return quotable(value, shape) ? value : fallback;
}
