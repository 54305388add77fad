import { NOTHING, OPERATOR_CHANGES } from '../audit-trail/audit-events.js';
import { newId, randomBase62, randomHex, seededRandom } from '../random.js';
import type { ApiKeysTable } from '../schema.js';
import { hintFor, SECRET_PREFIX } from '../secrets.js';
import { API_KEY_STATUSES } from '../statuses.js';
import { nowMicros } from '../time.js';
import type { ChangeContext, SeedOptions, Store } from '../types.js';
import { SEED_CHUNK_SIZE, seedingPortOf } from './seeding-port.js';

/**
 * The stored secret fields of a seeded key. Its secret would be thrown away, so none is made: the hash is 32 random
 * bytes, which no known secret hashes to (as for a secret thrown away), and the hint has the shape of a real one
 * (why: docs/benchmarks.md, "Seeding").
 */
function seededSecretFields(): { secret_hash: string; partial_key_hint: string } {
  return {
    secret_hash: randomHex(32),
    // The hint of a secret made of the eight random characters a hint shows.
    partial_key_hint: hintFor(`${SECRET_PREFIX.apiKey}${randomBase62(8)}`, 'apiKey'),
  };
}

/** Share of seeded keys whose expiry has passed when they are seeded. */
const EXPIRED_SHARE = 0.03;
/** Share of seeded keys that expire later, a day to a year after seeding (so never while a test runs). */
const EXPIRING_SHARE = 0.1;
/** Share of seeded keys bound to a principal (the user who created them); half of those have organization scope. */
const PRINCIPAL_SHARE = 0.02;
/**
 * The permissions of seeded keys with the lifecycle, by the key's position (no random draw, so the spread of
 * everything else stays what it was): two in five hold none; `documents.read` is granted to two in five, one of
 * them through a wildcard.
 */
const SEEDED_PERMISSIONS = [
  '[]',
  '[]',
  '[]',
  '[]',
  '["documents.read"]',
  '["documents.read","documents.write"]',
  '["documents.*"]',
  '["billing.read"]',
  '["*"]',
  '["billing.read","billing.write"]',
] as const;
const DAY_MICROS = 86_400_000_000;
const YEAR_MICROS = 365 * DAY_MICROS;

/**
 * Yields seed rows in chunks. Keys are one millisecond apart plus a random sub-millisecond part, so every
 * `created_at` is distinct, and the newest is about now. No key has a secret anyone knows.
 */
function* seedRows(options: SeedOptions, chunkSize: number): Generator<ApiKeysTable[]> {
  const random = seededRandom(options.seed);
  const pick = (n: number) => Math.floor(random() * n);
  const seededAt = nowMicros();
  const start = seededAt - options.count * 1000;
  let chunk: ApiKeysTable[] = [];
  for (let i = 0; i < options.count; i++) {
    const createdAt = start + i * 1000 + pick(1000);
    const workspace = pick(options.workspaces + 1);
    const createdById = `user_seed${pick(Math.max(options.users, 1))}`;
    const status = API_KEY_STATUSES[pick(API_KEY_STATUSES.length)] ?? 'active';
    // Without the lifecycle, no draw is made for it: the spread of everything else stays what it was.
    const expiry = options.lifecycle ? random() : 1;
    let expiresAt: number | null = null;
    if (expiry < EXPIRED_SHARE) {
      expiresAt = createdAt + pick(seededAt - createdAt);
    } else if (expiry < EXPIRED_SHARE + EXPIRING_SHARE) {
      expiresAt = seededAt + DAY_MICROS + pick(YEAR_MICROS);
    }
    const binding = options.lifecycle ? random() : 1;
    const bound = binding < PRINCIPAL_SHARE;
    const organizationScope = binding < PRINCIPAL_SHARE / 2;
    // Null: the default workspace, or no workspace with organization scope.
    const workspaceId = organizationScope || workspace === options.workspaces ? null : `wrkspc_seed${workspace}`;
    chunk.push({
      id: newId('apikey'),
      organization_id: options.organizationId,
      name: `seeded key ${i + 1}`,
      workspace_id: workspaceId,
      created_at: createdAt,
      created_by_id: createdById,
      created_by_type: 'user',
      ...seededSecretFields(),
      status,
      updated_at: createdAt,
      expires_at: expiresAt,
      principal_type: bound ? 'user' : null,
      principal_id: bound ? createdById : null,
      scope: organizationScope ? 'organization' : 'workspace',
      permissions: options.lifecycle ? (SEEDED_PERMISSIONS[i % SEEDED_PERMISSIONS.length] ?? '[]') : '[]',
      metadata: '{}',
    });
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
 * Bulk-creates keys for load and pagination tests, with no secret anyone knows. Returns the number created. It
 * commits in chunks and cannot run inside `transaction()`, and records one `api_key.seeded` event for all the keys,
 * once they are all in: a seed that fails half-way leaves the keys of the chunks it committed without an event
 * (seeding is for load tests; docs/operations.md).
 */
export async function seedApiKeys(
  store: Store,
  options: SeedOptions,
  context: ChangeContext = OPERATOR_CHANGES,
): Promise<number> {
  const port = seedingPortOf(store);
  const count = await port.insertRows('api_keys', seedRows(options, SEED_CHUNK_SIZE));
  await port.recordEvent(
    {
      organizationId: options.organizationId,
      type: 'api_key.seeded',
      target: { type: 'organization', id: options.organizationId },
      before: NOTHING,
      after: NOTHING,
      keyCount: count,
    },
    context,
  );
  return count;
}
