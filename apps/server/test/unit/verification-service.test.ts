import { checksumOf, hashSecret, type KeyOfSecret } from '@apikeys/store';
import { describe, expect, it, vi } from 'vitest';
import { type KeysBySecret, VerificationService } from '../../src/verification/verification-service.js';

const ORGANIZATION = 'org_verification';
const NOW = 1_800_000_000_000_000;
const RANDOM = 'A'.repeat(43);
const CURRENT = `sk-api-${RANDOM}${checksumOf(`sk-api-${RANDOM}`)}`;
const LEGACY = `sk-api-${'B'.repeat(43)}`;

/** Keys found by hash in a map, every lookup counted. */
function keysOf(found: Record<string, KeyOfSecret>): KeysBySecret & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    findApiKeyBySecretHash: vi.fn(async (hash: string) => {
      lookups.push(hash);
      return found[hash];
    }),
  };
}

const keyOf = (fields: Partial<KeyOfSecret['apiKey']> = {}, organizationId = ORGANIZATION): KeyOfSecret => ({
  organizationId,
  apiKey: {
    id: 'apikey_verification0000000000',
    name: 'gateway key',
    workspaceId: null,
    scope: 'workspace',
    createdAt: NOW - 1,
    createdBy: { type: 'user', id: 'user_alice' },
    partialKeyHint: 'sk-api-AAAA...AAAA',
    status: 'active',
    expiresAt: null,
    principal: null,
    ...fields,
  },
});

describe('VerificationService', () => {
  it('finds a current secret by its hash, with its status now', async () => {
    const keys = keysOf({ [hashSecret(CURRENT)]: keyOf() });

    const verdict = await new VerificationService(keys).verifyApiKey(ORGANIZATION, CURRENT, NOW);

    expect(verdict).toEqual({ found: true, key: keyOf().apiKey, status: 'active', permitted: true });
    expect(keys.lookups).toEqual([hashSecret(CURRENT)]);
  });

  it('looks up a secret issued before the checksum existed, so that such keys still verify', async () => {
    const keys = keysOf({ [hashSecret(LEGACY)]: keyOf() });

    const verdict = await new VerificationService(keys).verifyApiKey(ORGANIZATION, LEGACY, NOW);

    expect(verdict).toMatchObject({ found: true, status: 'active' });
  });

  it.each([
    ['a mistyped checksum', `${CURRENT.slice(0, -1)}${CURRENT.endsWith('A') ? 'B' : 'A'}`],
    ['an admin key of the current form', `sk-adm-${RANDOM}${checksumOf(`sk-adm-${RANDOM}`)}`],
    ['a verifier key of the legacy form', `sk-vfy-${'C'.repeat(43)}`],
    ['no form this service issues', 'Bearer hunter2'],
    ['a current secret with more after it', `${CURRENT}x`],
  ])('answers %s as not found without a lookup', async (_, secret) => {
    const keys = keysOf({});

    expect(await new VerificationService(keys).verifyApiKey(ORGANIZATION, secret, NOW)).toEqual({ found: false });
    expect(keys.lookups).toEqual([]);
  });

  it('answers a key of another organization exactly like an unknown secret', async () => {
    const keys = keysOf({ [hashSecret(CURRENT)]: keyOf({}, 'org_other') });
    const service = new VerificationService(keys);

    expect(await service.verifyApiKey(ORGANIZATION, CURRENT, NOW)).toEqual({ found: false });
    expect(await service.verifyApiKey(ORGANIZATION, LEGACY, NOW)).toEqual({ found: false });
  });

  it('compares the expiry with the moment of the verification: expired at, not before', async () => {
    const keys = keysOf({ [hashSecret(CURRENT)]: keyOf({ expiresAt: NOW }) });
    const service = new VerificationService(keys);

    expect(await service.verifyApiKey(ORGANIZATION, CURRENT, NOW - 1)).toMatchObject({ status: 'active' });
    expect(await service.verifyApiKey(ORGANIZATION, CURRENT, NOW)).toMatchObject({ status: 'expired' });
  });
});
