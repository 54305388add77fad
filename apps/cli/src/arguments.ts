import { API_KEY_NAME_LENGTH, PERMISSIONS } from '@apikeys/api-types';
import { isPermissionName, metadataNumberProblem } from '@apikeys/permissions';
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

/** Seconds in each unit of a duration. */
const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;

/** A whole number of units: `45s`, `90m`, `12h`, `30d`; or, where allowed, a plain number of seconds. */
const DURATION = /^(\d{1,9})([smhd])?$/;

/**
 * A duration such as `90m`, `12h` or `30d`, in seconds; with `seconds: true`, a plain number of seconds too. Bounds
 * are the API's to check, except that `positive` refuses zero.
 */
export function parseDuration(options: { seconds: boolean; positive: boolean }) {
  const expected = `a duration such as 90m, 12h or 30d (units: s, m, h, d)${options.seconds ? ', or seconds' : ''}`;
  return (value: string): number => {
    const match = DURATION.exec(value);
    const [, count, unit] = match ?? [];
    if (count === undefined || (unit === undefined && !options.seconds)) {
      throw new InvalidArgumentError(`must be ${expected}.`);
    }
    const seconds = Number(count) * UNIT_SECONDS[(unit ?? 's') as keyof typeof UNIT_SECONDS];
    if (options.positive && seconds === 0) {
      throw new InvalidArgumentError('must be more than zero.');
    }
    return seconds;
  };
}

/** An RFC 3339 date and time with a time zone, as the user wrote it (the API checks that it lies in the future). */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A time such as `2027-01-31T00:00:00Z`, passed on as it is; anything `Date` cannot read is refused too. */
export function parseTimestamp(value: string): string {
  if (!RFC_3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('must be an RFC 3339 time with a time zone, such as 2027-01-31T00:00:00Z.');
  }
  return value;
}

/**
 * One of `choices`, for an option that may be given several times (`--type a --type b`): collects the values in the
 * order given. Refuses another value as commander's own `choices` does.
 */
export function parseRepeatedChoice<Choice extends string>(choices: readonly Choice[]) {
  return (value: string, previous: Choice[] | undefined): Choice[] => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    }
    return [...(previous ?? []), value as Choice];
  };
}

/**
 * A permission name as the spec writes it (`documents.read`, `documents.*`, `*`), for an option that may be given
 * several times: collects the names in the order given. How many, and whether one repeats, is the API's to judge.
 */
export function parsePermission(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), parsePermissionName(value)];
}

/** One permission name as the spec writes it: dotted segments of `a-z`, `0-9`, `_` and `-`, a last `*` or `*` alone. */
export function parsePermissionName(value: string): string {
  if (/[\s,]/.test(value)) {
    throw new InvalidArgumentError('must be one permission name: repeat the option for several.');
  }
  if (!isPermissionName(value)) {
    throw new InvalidArgumentError(
      'must be a permission name: dot-separated segments of a-z, 0-9, _ and -, the last of which may be * ' +
        `(documents.read, documents.*, *), at most ${PERMISSIONS.nameMaxLength} characters.`,
    );
  }
  return value;
}

/** What JSON text holds, in words, for an error: `an array`, `a string`, `null`. */
function jsonKind(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A key's metadata: JSON text holding an object (`{"owner":"team-billing"}`; `{}` for none). Its size and depth are
 * the API's to judge; a number that would not reach it as written (`1e400`, which this process would send as
 * `null`) is refused here, by the API's own rule, rather than sent as something else.
 */
export function parseMetadata(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`must be a JSON object: ${error instanceof Error ? error.message : String(error)}.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`must be a JSON object ({"owner": "team-billing"}), not ${jsonKind(value)}.`);
  }
  const problem = metadataNumberProblem(value);
  if (problem !== undefined) {
    throw new InvalidArgumentError(`${problem}.`);
  }
  return value as Record<string, unknown>;
}
