import { ROTATION_GRACE_PERIOD_SECONDS } from '@apikeys/api-types';

const { minimum, maximum } = ROTATION_GRACE_PERIOD_SECONDS;

/**
 * The grace periods offered when rotating, in seconds: the spec's default (none) and its maximum, and an hour and a
 * day between them, within the spec's bounds (`RotateApiKeyRequest.grace_period_seconds`).
 */
export const GRACE_PERIODS: readonly number[] = [
  ...new Set([ROTATION_GRACE_PERIOD_SECONDS.default, 3_600, 86_400, maximum]),
]
  .filter((seconds) => seconds >= minimum && seconds <= maximum)
  .sort((a, b) => a - b);
