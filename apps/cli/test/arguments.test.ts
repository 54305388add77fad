import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseTimestamp } from '../src/arguments.js';

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
