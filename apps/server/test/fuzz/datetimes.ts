/**
 * RFC 3339 datetimes as the contract takes them (`DateTimeInput`, `ExpiresAt`): the fuzzer's own reading of one
 * into an instant, independent of the server's, and generators of valid and invalid ones.
 */
import fc from 'fast-check';
import type { JsonSchema } from './spec-model.js';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

const MICROS_PER_SECOND = 1_000_000n;

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** The number of days of a month (1 to 12) of a year of the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The date of a day counted from 1970-01-01 (the inverse of `daysFromCivil`). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

/**
 * The instant an RFC 3339 datetime with a time zone names, in microseconds since the epoch; undefined for text that
 * is none, or names a date, time or offset that does not exist (February 30th, 24:00, +24:00). A leap second
 * (`23:59:60`) names no instant of the UTC timeline as POSIX time counts it, which the API's timestamps use, and so
 * is none either. Digits beyond microseconds are cut (the schema's pattern refuses them).
 */
export function instantOf(text: string): bigint | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) {
    return undefined;
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = match.slice(7);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return undefined;
  }
  if (hour > 23 || minute > 59 || second > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59) {
    return undefined;
  }
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60);
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
  return BigInt(seconds) * MICROS_PER_SECOND + BigInt(fraction.slice(0, 6).padEnd(6, '0'));
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** `hh:mm:ss` of a second of the day. */
function clock(secondOfDay: number): string {
  const [hours, minutes, seconds] = [
    Math.floor(secondOfDay / 3600),
    Math.floor(secondOfDay / 60) % 60,
    secondOfDay % 60,
  ];
  return `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}`;
}

/** The time zone `offsetMinutes` east of UTC: `Z`, or `+hh:mm` / `-hh:mm`. */
function zoneOf(offsetMinutes: number): string {
  const minutes = Math.abs(offsetMinutes);
  return offsetMinutes === 0
    ? 'Z'
    : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60), 2)}:${pad(minutes % 60, 2)}`;
}

/** An instant written as RFC 3339 in a time zone `offsetMinutes` east of UTC, with `digits` fractional digits. */
export function formatInstant(micros: bigint, offsetMinutes: number, digits: number): string {
  const local = micros + BigInt(offsetMinutes * 60) * MICROS_PER_SECOND;
  const seconds = local / MICROS_PER_SECOND - (local % MICROS_PER_SECOND < 0n ? 1n : 0n);
  const fraction = local - seconds * MICROS_PER_SECOND;
  const days = Math.floor(Number(seconds) / 86_400);
  const secondOfDay = Number(seconds) - days * 86_400;
  const [year, month, day] = civilFromDays(days);
  const shown = digits === 0 ? '' : `.${pad(Number(fraction), 6).slice(0, digits)}`;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${clock(secondOfDay)}${shown}${zoneOf(offsetMinutes)}`;
}

/** The latest moment a schema accepts (`x-latest`, on it or on a schema it combines), if any. */
export function latestOf(schema: JsonSchema): string | undefined {
  if (schema['x-latest'] !== undefined) {
    return schema['x-latest'];
  }
  for (const inner of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    const found = latestOf(inner);
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

/** Datetimes that are not RFC 3339 with a time zone, or name no instant: each a client may well send. */
export const BAD_DATETIMES = [
  '2027-02-29T00:00:00Z',
  '2028-02-30T00:00:00Z',
  '2027-04-31T12:00:00Z',
  '2027-13-01T00:00:00Z',
  '2027-00-10T00:00:00Z',
  '2027-01-00T00:00:00Z',
  '2027-01-01T24:00:00Z',
  '2027-01-01T23:60:00Z',
  '2027-06-30T23:59:60Z',
  '2027-01-01T00:00:00+24:00',
  '2027-01-01T00:00:00+01:60',
  '2027-01-01T00:00:00',
  '2027-01-01T00:00:00.1234567Z',
  '2027-01-01T00:00:00.Z',
  '2027-01-01T00:00:00,5Z',
  '2027-01-01t00:00:00z',
  '2027-01-01 00:00:00Z',
  '2027-01-01T00:00:00+0100',
  '2027-01-01T00:00:00+01',
  '2027-01-01T00:00Z',
  '2027-01-01',
  '20270101T000000Z',
  '+02027-01-01T00:00:00Z',
  '2027-1-1T0:0:0Z',
  '2027-01-01T00:00:00ZZ',
  '2027-01-01T00:00:00Z ',
  ' 2027-01-01T00:00:00Z',
  '2027-01-01T00:00:00 Z',
  '2027-01-01T00:00:00\u0000Z',
  '２０２７-01-01T00:00:00Z',
  '1798761600',
  'now',
  'Fri, 01 Jan 2027 00:00:00 GMT',
] as const;

const zone = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 1, 60, -60, 330, 345, -(23 * 60 + 59), 23 * 60 + 59) },
);

/** A valid datetime of the given years: a real date and time, a time zone, and 0 to 6 fractional digits. */
function datetimeIn(years: { min: number; max: number }): fc.Arbitrary<string> {
  return fc
    .record({
      year: fc.integer(years),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 31 }),
      secondOfDay: fc.integer({ min: 0, max: 86_399 }),
      micros: fc.integer({ min: 0, max: 999_999 }),
      offset: zone,
      digits: fc.integer({ min: 0, max: 6 }),
    })
    .map(({ year, month, day, secondOfDay, micros, offset, digits }) => {
      const local = `${pad(year, 4)}-${pad(month, 2)}-${pad(Math.min(day, daysInMonth(year, month)), 2)}`;
      const fraction = digits === 0 ? '' : `.${pad(micros, 6).slice(0, digits)}`;
      return `${local}T${clock(secondOfDay)}${fraction}${zoneOf(offset)}`;
    });
}

/** The instants around a latest moment, in several time zones and precisions: the edges of `x-latest`. */
function aroundLatest(latest: string): string[] {
  const instant = instantOf(latest);
  if (instant === undefined) {
    throw new Error(`x-latest ${latest} is no RFC 3339 datetime`);
  }
  const around = [instant, instant + 1n, instant - 1n, instant + 60n * MICROS_PER_SECOND];
  return around.flatMap((micros) =>
    [0, 1, -1, 60, -600].flatMap((offset) => [6, 0].map((digits) => formatInstant(micros, offset, digits))),
  );
}

/**
 * Valid datetimes for a `date-time` string schema: mostly in the next two centuries (the future an expiry needs),
 * some in the past, some anywhere in years 0000 to 9999, and for a schema with `x-latest`, the instants around it.
 */
export function validDateTime(schema: JsonSchema): fc.Arbitrary<string> {
  const latest = latestOf(schema);
  return fc.oneof(
    { weight: 5, arbitrary: datetimeIn({ min: 2027, max: 2199 }) },
    { weight: 2, arbitrary: datetimeIn({ min: 1970, max: 2026 }) },
    { weight: 1, arbitrary: datetimeIn({ min: 0, max: 9999 }) },
    ...(latest === undefined ? [] : [{ weight: 2, arbitrary: fc.constantFrom(...aroundLatest(latest)) }]),
  );
}
