import { API_VERSION_NAMES, type ApiVersion } from '@apikeys/api-types';
import type { Readiness } from '../../health/readiness.js';
import type { OperationHandlers } from '../typed-handler.js';
import type { Services } from './services.js';
import { v2023_06_01Handlers } from './v2023_06_01.js';
import { v2026_10_21Handlers } from './v2026_10_21.js';

/** The handlers of every operation of every API version: a version without handlers is a compile error. */
export type VersionHandlers = { [Version in ApiVersion]: OperationHandlers<Version> };

/** The handlers of each API version, keyed by version. */
export function versionHandlers(services: Services, readiness: Readiness): VersionHandlers {
  return {
    [API_VERSION_NAMES.v2023_06_01]: v2023_06_01Handlers(services, readiness),
    [API_VERSION_NAMES.v2026_10_21]: v2026_10_21Handlers(services, readiness),
  };
}
