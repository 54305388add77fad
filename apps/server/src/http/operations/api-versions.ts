import type { API_VERSION_NAMES } from '@apikeys/api-types';

/** The first API version, whose keys have no expiry, principal or scope. */
export type V2023_06_01 = typeof API_VERSION_NAMES.v2023_06_01;

/** The API version of the key lifecycle with expiry, principals and scopes, and of the audit trail. */
export type V2026_10_21 = typeof API_VERSION_NAMES.v2026_10_21;
