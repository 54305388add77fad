import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  parseDuration,
  parseMetadata,
  parsePermission,
  parsePermissionName,
  parseTimestamp,
} from '../src/arguments.js';

describe('parseDuration', () => {
  const withUnit = parseDuration({ seconds: false, positive: true });
  const orSeconds = parseDuration({ seconds: true, positive: false });

  it.each([
    ['45s', 45],
    ['90m', 5_400],
    ['12h', 43_200],
    ['30d', 2_592_000],
    ['1d', 86_400],
  ])('reads %s as %i seconds', (text, seconds) => {
    expect(withUnit(text)).toBe(seconds);
    expect(orSeconds(text)).toBe(seconds);
  });

  it('reads a plain number as seconds only where seconds are allowed', () => {
    expect(orSeconds('3600')).toBe(3_600);
    expect(orSeconds('0')).toBe(0);
    expect(() => withUnit('3600')).toThrow(/must be a duration such as 90m, 12h or 30d \(units: s, m, h, d\)\.$/);
  });

  it('refuses zero where the duration must be positive', () => {
    expect(() => withUnit('0h')).toThrow('must be more than zero.');
    expect(orSeconds('0h')).toBe(0);
  });

  it.each(['', ' 1d', '1d ', '1D', '1.5h', '-1d', '+1d', '1d12h', '1w', 'd', '1e3', '1_000', '1234567890s'])(
    'refuses %j',
    (text) => {
      expect(() => orSeconds(text)).toThrow(InvalidArgumentError);
      expect(() => withUnit(text)).toThrow(InvalidArgumentError);
    },
  );
});

describe('parseTimestamp', () => {
  it.each([
    '2027-01-31T00:00:00Z',
    '2027-01-31T00:00:00.123456Z',
    '2027-01-31T01:00:00+01:00',
    '2027-01-31T00:00:00-05:30',
  ])('passes %s on as it is', (text) => {
    expect(parseTimestamp(text)).toBe(text);
  });

  it.each([
    'tomorrow',
    '2027-01-31',
    '2027-01-31T00:00:00',
    '2027-01-31 00:00:00Z',
    '2027-13-01T00:00:00Z',
    '1738281600',
  ])('refuses %j', (text) => {
    expect(() => parseTimestamp(text)).toThrow(
      'must be an RFC 3339 time with a time zone, such as 2027-01-31T00:00:00Z.',
    );
  });
});

describe('parsePermission', () => {
  it('collects the names in the order given, one per option', () => {
    const first = parsePermission('documents.read', undefined);

    expect(first).toEqual(['documents.read']);
    expect(parsePermission('documents.*', first)).toEqual(['documents.read', 'documents.*']);
    expect(parsePermission('*', first)).toEqual(['documents.read', '*']);
  });

  it.each(['documents.read', 'documents.*', '*', 'a', 'billing_v2.invoices-export.write', 'none'])(
    'takes %j',
    (name) => {
      expect(parsePermissionName(name)).toBe(name);
    },
  );

  it.each(['documents.read,documents.write', 'documents.read documents.write', ' documents.read'])(
    'refuses %j, asking for one name per option',
    (text) => {
      expect(() => parsePermissionName(text)).toThrow('must be one permission name: repeat the option for several.');
    },
  );

  it.each(['', 'Documents.read', 'documents.', '.read', 'documents..read', '*.read', 'documents.*.read', 'a*', 'é'])(
    'refuses %j, saying what a name is',
    (text) => {
      expect(() => parsePermission(text, undefined)).toThrow(/^must be a permission name: dot-separated segments/);
    },
  );

  it('refuses a name one character over the maximum of the spec', () => {
    expect(parsePermissionName('a'.repeat(128))).toHaveLength(128);
    expect(() => parsePermissionName('a'.repeat(129))).toThrow(InvalidArgumentError);
  });
});

describe('parseMetadata', () => {
  it('reads a JSON object, nested values and whitespace included', () => {
    expect(parseMetadata('{"owner":"team-billing","limits":{"rps":10},"tags":["a"]}')).toEqual({
      owner: 'team-billing',
      limits: { rps: 10 },
      tags: ['a'],
    });
    expect(parseMetadata(' {\n "a": null }\n')).toEqual({ a: null });
    expect(parseMetadata('{}')).toEqual({});
  });

  it.each(['{owner: "x"}', "{'owner':'x'}", '{"a":1,}', '', '{"a":1}}'])('refuses %j as JSON', (text) => {
    expect(() => parseMetadata(text)).toThrow(/^must be a JSON object: /);
  });

  it.each([
    ['[{"a":1}]', 'an array'],
    ['null', 'null'],
    ['"owner"', 'a string'],
    ['42', 'a number'],
    ['true', 'a boolean'],
  ])('refuses %s, which is not an object but %s', (text, kind) => {
    expect(() => parseMetadata(text)).toThrow(`must be a JSON object ({"owner": "team-billing"}), not ${kind}.`);
  });
});
