/** The organization that exists from the first migration, so a single-organization deployment needs no setup. */
export const DEFAULT_ORGANIZATION = {
  id: 'org_default',
  name: 'Default organization',
} as const;
