import { API_KEY_NAME_LENGTH } from '@apikeys/api-types';
import { InvalidArgumentError } from 'commander';

export { API_KEY_STATUSES } from '@apikeys/api-types';

const { minimum, maximum } = API_KEY_NAME_LENGTH;

/** The length a name may have, for help texts: `1 to 500 characters`. */
export const NAME_LENGTH = `${minimum} to ${maximum} characters`;

/** A name of the length the API accepts (from the spec), counted in Unicode code points as the API counts them. */
export function parseName(value: string): string {
  const length = [...value].length;
  if (length < minimum || length > maximum) {
    throw new InvalidArgumentError(`must be ${NAME_LENGTH} (got ${length}).`);
  }
  return value;
}

/** A whole number within [min, max]. */
export function parseInteger(min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value)) {
      throw new InvalidArgumentError('must be a whole number.');
    }
    const parsed = Number(value);
    if (parsed < min || parsed > max) {
      throw new InvalidArgumentError(`must be between ${min} and ${max}.`);
    }
    return parsed;
  };
}

/** A non-empty identifier without whitespace. */
export function parseId(value: string): string {
  if (value === '' || /\s/.test(value)) {
    throw new InvalidArgumentError('must be a non-empty ID without spaces.');
  }
  return value;
}

/** An API key ID: an ID as `parseId` takes it, but not `.` or `..`, which a URL path would resolve away. */
export function parseApiKeyId(value: string): string {
  if (value === '.' || value === '..') {
    throw new InvalidArgumentError('must be an API key ID (apikey_...).');
  }
  return parseId(value);
}
