/**
 * This file was generated from spec/openapi.yaml by scripts/generate-types.ts.
 * Do not make direct changes to the file.
 */

import type * as v2023_06_01 from './openapi-2023-06-01.js';
import type * as v2026_10_21 from './openapi-2026-10-21.js';

/** The generated types of each API version, one namespace per version (`v2023_06_01.components`, ...). */
export type { v2023_06_01, v2026_10_21 };

/** The generated types of each API version, by version. */
export interface VersionTypes {
  "2023-06-01": {
    paths: v2023_06_01.paths;
    components: v2023_06_01.components;
    operations: v2023_06_01.operations;
  };
  "2026-10-21": {
    paths: v2026_10_21.paths;
    components: v2026_10_21.components;
    operations: v2026_10_21.operations;
  };
}

/** Each API version by its name in code. */
export const API_VERSION_NAMES = {
  v2023_06_01: "2023-06-01",
  v2026_10_21: "2026-10-21",
} as const;
