import { describe, expect, it } from 'vitest';
import { API_KEY_STATUSES, EFFECTIVE_API_KEY_STATUSES, effectiveStatus } from '../src/statuses.js';
import type { ApiKeyStatus, EffectiveApiKeyStatus } from '../src/types.js';

const NOW = 1_800_000_000_000_000;

describe('effectiveStatus', () => {
  it.each<[ApiKeyStatus, number | null, EffectiveApiKeyStatus]>([
    ['active', null, 'active'],
    ['inactive', null, 'inactive'],
    ['archived', null, 'archived'],
    ['active', NOW + 1, 'active'],
    ['inactive', NOW + 1, 'inactive'],
    ['archived', NOW + 1, 'archived'],
    ['active', NOW, 'expired'],
    ['inactive', NOW, 'expired'],
    ['archived', NOW, 'archived'],
    ['active', NOW - 1, 'expired'],
    ['inactive', 0, 'expired'],
    ['archived', 0, 'archived'],
  ])(
    'a key stored %s with expiry %s is %s: archived wins, then an expiry at or before now',
    (status, expiresAt, expected) => {
      expect(effectiveStatus({ status, expiresAt }, NOW)).toBe(expected);
    },
  );

  it('a record without an expiry (made by hand) never expires', () => {
    expect(effectiveStatus({ status: 'active' }, NOW)).toBe('active');
  });
});

describe('EFFECTIVE_API_KEY_STATUSES', () => {
  it('lists every stored status and expired, once each', () => {
    expect(EFFECTIVE_API_KEY_STATUSES).toEqual([...API_KEY_STATUSES, 'expired']);
  });
});
