/** Seeding: bulk creation of keys and events for load and pagination tests; no part of the production `Store`. */
export { seedApiKeys } from './seed-api-keys.js';
export { seedAuditEvents } from './seed-audit-events.js';
export type { SeedAuditEventsOptions, SeedOptions } from './types.js';
