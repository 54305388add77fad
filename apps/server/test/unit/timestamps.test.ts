import { LATEST_EXPIRY } from '@apikeys/api-types';
import { microsToRfc3339, rfc3339ToMicros } from '@apikeys/store';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('microsToRfc3339', () => {
  it.each([
    [1_730_332_707_427_722, '2024-10-30T23:58:27.427722Z'],
    [1_730_332_707_427_005, '2024-10-30T23:58:27.427005Z'],
    [1_730_332_707_000_001, '2024-10-30T23:58:27.000001Z'],
    [1_730_332_707_999_999, '2024-10-30T23:58:27.999999Z'],
    [0, '1970-01-01T00:00:00.000000Z'],
    [-1, '1969-12-31T23:59:59.999999Z'],
    [7_258_118_399_999_999, '2199-12-31T23:59:59.999999Z'],
  ])('formats %i microseconds as %s', (micros, expected) => {
    expect(microsToRfc3339(micros)).toBe(expected);
  });

  it('agrees with Date formatting when consecutive values jump between seconds', () => {
    // The formatter reuses the date part within a second: alternating seconds must never reuse a stale one.
    const reference = (micros: number) => {
      const millis = Math.floor(micros / 1000);
      return `${new Date(millis).toISOString().slice(0, 23)}${String(micros - millis * 1000).padStart(3, '0')}Z`;
    };
    const values = [1_730_332_707_999_999, 1_730_332_708_000_000, 1_730_332_707_000_000, -1, 0, 86_400_000_000];
    for (let i = 0; i < 2000; i++) {
      values.push(1_700_000_000_000_000 + ((i * 7_919_993) % 5_000_000_000), -((i * 104_729) % 3_000_000));
    }
    for (const micros of values) {
      expect(microsToRfc3339(micros)).toBe(reference(micros));
    }
  });

  it('always has exactly six fractional digits and the UTC Z', () => {
    for (let micros = 1_700_000_000_000_000; micros < 1_700_000_000_002_000; micros += 7) {
      expect(microsToRfc3339(micros)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    }
  });

  it('sorts as text in the same order as the microseconds', () => {
    const micros = [1_730_332_707_427_722, 1_730_332_707_427_723, 1_730_332_708_000_000, 1_600_000_000_000_001];
    const byText = [...micros].sort((a, b) => (microsToRfc3339(a) < microsToRfc3339(b) ? -1 : 1));

    expect(byText).toEqual([...micros].sort((a, b) => a - b));
  });
});

describe('every expiry the API accepts reads back exactly', () => {
  const latest = rfc3339ToMicros(LATEST_EXPIRY) as number;

  it('the latest expiry is a safe integer of microseconds, and formats as the spec writes it', () => {
    expect(Number.isSafeInteger(latest)).toBe(true);
    expect(microsToRfc3339(latest)).toBe(LATEST_EXPIRY);
  });

  it('formats, then parses, every instant from the epoch to the latest expiry to the same microsecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: latest }), (micros) => {
        const text = microsToRfc3339(micros);
        expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        expect(rfc3339ToMicros(text)).toBe(micros);
      }),
      { numRuns: 20_000, seed: 20_261_127 },
    );
  });
});
