import type { v2026_10_21 } from '@apikeys/api-types';
import { type AuditEventRecord, type AuditTarget, microsToRfc3339 } from '@apikeys/store';

type Schemas = v2026_10_21.components['schemas'];

const targetJson = (target: AuditTarget): Schemas['AuditTarget'] => ({ type: target.type, id: target.id });

const timestampOrNull = (micros: number | null) => (micros === null ? null : microsToRfc3339(micros));

const listOrNull = (names: readonly string[] | null) => (names === null ? null : [...names]);

function changesJson(changes: AuditEventRecord['changes']): Schemas['AuditChanges'] {
  const { name, status, expiresAt, permissions, metadata } = changes;
  return {
    ...(name && { name: { from: name.from, to: name.to } }),
    ...(status && { status: { from: status.from, to: status.to } }),
    ...(expiresAt && { expires_at: { from: timestampOrNull(expiresAt.from), to: timestampOrNull(expiresAt.to) } }),
    ...(permissions && { permissions: { from: listOrNull(permissions.from), to: listOrNull(permissions.to) } }),
    ...(metadata && { metadata: { from: metadata.from, to: metadata.to } }),
  };
}

/** An audit event as the API shows it (from version `v2026_10_21`). */
export function toAuditEventJson(event: AuditEventRecord): Schemas['AuditEvent'] {
  return {
    id: event.id,
    type: event.type,
    occurred_at: microsToRfc3339(event.occurredAt),
    actor:
      event.actor.type === 'admin_key'
        ? { type: 'admin_key', id: event.actor.id }
        : { type: 'operator', name: event.actor.name },
    target: targetJson(event.target),
    changes: changesJson(event.changes),
    related: event.related && targetJson(event.related),
    key_count: event.keyCount,
    request_id: event.requestId,
    client: event.client && { ip_address: event.client.ipAddress, user_agent: event.client.userAgent },
  };
}
