import { ROTATION_GRACE_PERIOD_SECONDS } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import { GRACE_PERIODS } from '../src/rotation.js';

describe('the grace periods offered when rotating', () => {
  it("run from the spec's default to its maximum, in order, within its bounds", () => {
    const { minimum, maximum } = ROTATION_GRACE_PERIOD_SECONDS;

    expect(GRACE_PERIODS[0]).toBe(ROTATION_GRACE_PERIOD_SECONDS.default);
    expect(GRACE_PERIODS.at(-1)).toBe(maximum);
    expect(GRACE_PERIODS.every((seconds) => seconds >= minimum && seconds <= maximum)).toBe(true);
    expect([...GRACE_PERIODS].sort((a, b) => a - b)).toEqual(GRACE_PERIODS);
  });
});
