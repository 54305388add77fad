import { describe, expect, it } from 'vitest';
import { nowMicros } from '../src/time.js';

describe('nowMicros', () => {
  it('is the wall clock in microseconds', () => {
    const before = Date.now();
    const micros = nowMicros();
    const after = Date.now();

    expect(Number.isSafeInteger(micros)).toBe(true);
    expect(micros).toBeGreaterThanOrEqual(before * 1000);
    expect(micros).toBeLessThan((after + 1) * 1000 + 1000);
  });

  it('strictly increases from call to call, even within one millisecond', () => {
    const samples = Array.from({ length: 200_000 }, () => nowMicros());

    const steps = samples.slice(1).map((micros, i) => micros - (samples[i] ?? 0));
    expect(steps.filter((step) => step <= 0)).toEqual([]);
  });
});
