import type { ApiKeyStatus } from '@apikeys/api-types';

// Keyed by the generated union: a status added to the spec fails compilation here until it is listed.
const STATUSES: Record<ApiKeyStatus, true> = { active: true, inactive: true, archived: true };

/** Every API key status, in the order the spec lists them. */
export const API_KEY_STATUSES = Object.keys(STATUSES) as readonly ApiKeyStatus[];
