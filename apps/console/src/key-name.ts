import { API_KEY_NAME_LENGTH } from '@apikeys/api-types';

/**
 * Why a key name would be refused by the API, or null when it is valid: the spec's length rule, counted in Unicode
 * code points as the API counts it, and no NUL character (the spec's pattern).
 */
export function nameProblem(name: string): string | null {
  const length = [...name].length;
  if (length < API_KEY_NAME_LENGTH.minimum) {
    return 'Enter a name.';
  }
  if (length > API_KEY_NAME_LENGTH.maximum) {
    return `A name has at most ${API_KEY_NAME_LENGTH.maximum} characters; this one has ${length}.`;
  }
  if (name.includes('\u0000')) {
    return 'A name cannot contain a NUL character.';
  }
  return null;
}
