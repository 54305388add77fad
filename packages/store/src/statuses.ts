import type { ApiKeyStatus } from './types.js';

// Keyed by the union: a status added to the type fails compilation here until it is listed.
const STATUSES: Record<ApiKeyStatus, true> = { active: true, inactive: true, archived: true };

/** Every API key status. */
export const API_KEY_STATUSES = Object.keys(STATUSES) as readonly ApiKeyStatus[];
