import { describe, expect, it } from 'vitest';
import {
  formatChanges,
  formatCreator,
  formatDuration,
  formatScope,
  formatTime,
  isoToUtcInput,
  utcInputToIso,
} from '../src/format.js';

describe('what the console shows', () => {
  it('shows times in UTC to the minute', () => {
    expect(formatTime('2026-11-22T14:03:59.123456Z')).toBe('2026-11-22 14:03 UTC');
    expect(formatTime('not a time')).toBe('not a time');
  });

  it('reads an expiry typed in a datetime-local field as UTC, and writes one back', () => {
    expect(utcInputToIso('2027-01-31T12:00')).toBe('2027-01-31T12:00:00.000Z');
    expect(utcInputToIso('2027-01-31T12:00:30')).toBe('2027-01-31T12:00:30.000Z');
    expect(utcInputToIso('')).toBeNull();
    expect(utcInputToIso('2027-02-31T12:00x')).toBeNull();
    expect(isoToUtcInput('2027-01-31T12:00:00Z')).toBe('2027-01-31T12:00');
  });

  it('names scopes, creators and grace periods', () => {
    expect(formatScope({ type: 'workspace', workspace_id: 'wrkspc_1' })).toBe('wrkspc_1');
    expect(formatScope({ type: 'organization' })).toBe('Organization');
    expect(formatCreator(null)).toBe('—');
    expect(formatCreator({ type: 'service_account', id: 'svac_1' })).toBe('service account svac_1');
    expect(formatDuration(86_400)).toBe('1 day');
    expect(formatDuration(7 * 86_400)).toBe('7 days');
    expect(formatDuration(3_600)).toBe('1 hour');
  });

  it('lists the changes of an audit event, field by field', () => {
    expect(
      formatChanges({
        name: { from: 'a', to: 'b' },
        expires_at: { from: null, to: '2027-01-31T00:00:00Z' },
      }),
    ).toEqual(['name: a → b', 'expires_at: none → 2027-01-31 00:00 UTC']);
  });

  it('lists the whole permissions and metadata before and after, and empty ones as none', () => {
    expect(
      formatChanges({
        permissions: { from: null, to: ['documents.read', 'documents.*'] },
        metadata: { from: { owner: 'team-billing' }, to: {} },
      }),
    ).toEqual(['permissions: none → documents.read, documents.*', 'metadata: {"owner":"team-billing"} → none']);
    expect(formatChanges({ permissions: { from: ['a'], to: [] } })).toEqual(['permissions: a → none']);
  });

  it('decides by the field, not by the value, which changes are times: a name that looks like one stays a name', () => {
    expect(formatChanges({ name: { from: '2026-01-01T00:00 launch', to: 'launch' } })).toEqual([
      'name: 2026-01-01T00:00 launch → launch',
    ]);
  });
});
