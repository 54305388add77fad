/**
 * The shapes a client-sent value must have before an error message may repeat it. A value of another shape (an
 * admin key sent as an ID, a version or a parameter name, say) is never quoted, so a secret sent in the wrong
 * place never comes back in a response.
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
} as const;

/** Whether `value` has the shape of its field, so that an error message may quote it. */
export function quotable(value: string, shape: keyof typeof SHAPES): boolean {
  return SHAPES[shape].test(value);
}

/** `value` when it has its field's shape, else `fallback`: what an error message may say of a client's value. */
export function quoteOr(value: string, shape: keyof typeof SHAPES, fallback: string): string {
  return quotable(value, shape) ? value : fallback;
}
