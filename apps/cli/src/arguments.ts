import { InvalidArgumentError } from 'commander';

export { API_KEY_STATUSES } from '@apikeys/store';

const MAX_NAME_LENGTH = 500;

/** A name of 1 to 500 characters, counted in Unicode code points as the API counts them. */
export function parseName(value: string): string {
  const length = [...value].length;
  if (length < 1 || length > MAX_NAME_LENGTH) {
    throw new InvalidArgumentError(`must be 1 to ${MAX_NAME_LENGTH} characters (got ${length}).`);
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
