import { eventRow, NOTHING } from '../audit-trail/audit-events.js';
import { seededRandom } from '../random.js';
import type { AuditEventsTable } from '../schema.js';
import { nowMicros } from '../time.js';
import type { AuditEventType, SeedAuditEventsOptions, Store } from '../types.js';
import { SEED_CHUNK_SIZE, seedingPortOf } from './seeding-port.js';

/** The spread of seeded events' types: mostly updates, as in a real trail. */
const SEEDED_TYPES: readonly AuditEventType[] = [
  ...Array<AuditEventType>(80).fill('api_key.updated'),
  ...Array<AuditEventType>(12).fill('api_key.created'),
  ...Array<AuditEventType>(6).fill('api_key.rotated'),
  'admin_key.disabled',
  'admin_key.enabled',
];

/**
 * Yields the rows of seeded events in chunks, one millisecond apart plus a random sub-millisecond part, the newest
 * about now; each an update (a rename) of one of `targets` keys by one of `actors` admin keys, or another type.
 */
function* seedAuditEventRows(options: SeedAuditEventsOptions, chunkSize: number): Generator<AuditEventsTable[]> {
  const random = seededRandom(options.seed);
  const pick = (n: number) => Math.floor(random() * n);
  const start = nowMicros() - options.count * 1000;
  let chunk: AuditEventsTable[] = [];
  for (let i = 0; i < options.count; i++) {
    const type = SEEDED_TYPES[pick(SEEDED_TYPES.length)] ?? 'api_key.updated';
    const onAdminKey = type.startsWith('admin_key.');
    const actor = `adminkey_seed${pick(Math.max(options.actors, 1))}`;
    const target = onAdminKey ? actor : `apikey_seed${pick(Math.max(options.targets, 1))}`;
    const renamed = type === 'api_key.updated';
    chunk.push(
      eventRow(
        {
          organizationId: options.organizationId,
          type,
          target: { type: onAdminKey ? 'admin_key' : 'api_key', id: target },
          before: { ...NOTHING, name: renamed ? `seeded name ${i}` : null },
          after: { ...NOTHING, name: renamed ? `seeded name ${i + 1}` : null },
          occurredAt: start + i * 1000 + pick(1000),
        },
        { actor: { type: 'admin_key', id: actor }, requestId: `req_seed${i}`, client: null },
      ),
    );
    if (chunk.length === chunkSize) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) {
    yield chunk;
  }
}

/**
 * Bulk-creates audit events for load tests, about keys that need not exist. Like `seedApiKeys`, it commits in
 * chunks and cannot run inside `transaction()`. Returns the number created.
 */
export async function seedAuditEvents(store: Store, options: SeedAuditEventsOptions): Promise<number> {
  return seedingPortOf(store).insertRows('audit_events', seedAuditEventRows(options, SEED_CHUNK_SIZE));
}
