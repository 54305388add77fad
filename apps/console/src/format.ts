import type { ApiKey, AuditActor, AuditChanges, CreatedBy } from '@apikeys/client';

/** A timestamp as the console shows it: `2026-11-22 14:03 UTC` (the API's timestamps are UTC). */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) {
    return iso;
  }
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Where a key belongs: its workspace, or the whole organization. */
export function formatScope(scope: ApiKey['scope']): string {
  return scope.type === 'workspace' ? scope.workspace_id : 'Organization';
}

/** Who created a key: `user_...` or `service account svac_...`, or a dash when it was not recorded. */
export function formatCreator(createdBy: CreatedBy | null): string {
  if (createdBy === null) {
    return '—';
  }
  // No default: a new kind of creator in the spec is a compile error until it is shown here.
  switch (createdBy.type) {
    case 'user':
      return createdBy.id;
    case 'service_account':
      return `service account ${createdBy.id}`;
  }
}

/** Whom a key acts as, or `None`. */
export function formatPrincipal(principal: ApiKey['principal']): string {
  if (principal === null) {
    return 'None';
  }
  return principal.type === 'user_actor'
    ? `user ${principal.user_id}`
    : `service account ${principal.service_account_id}`;
}

/** Who made a change in the audit trail: an admin key through the API, or an operator through the CLI. */
export function formatActor(actor: AuditActor): string {
  return actor.type === 'admin_key' ? `admin key ${actor.id}` : `operator ${actor.name ?? '(unknown user)'}`;
}

type Changes = NonNullable<AuditChanges>;
type ChangedField = keyof Changes;
/** What a changed field held before or after, when it held something. */
type ChangedValue<Field extends ChangedField> = NonNullable<NonNullable<Changes[Field]>['from']>;

/** How each changed field's value is shown; a new field of the spec is a compile error until it is added here. */
const CHANGE_FORMATS: { [Field in ChangedField]: (value: ChangedValue<Field>) => string } = {
  name: (name) => name,
  status: (status) => status,
  expires_at: formatTime,
  permissions: (permissions) => (permissions.length === 0 ? 'none' : permissions.join(', ')),
  metadata: (metadata) => (Object.keys(metadata).length === 0 ? 'none' : JSON.stringify(metadata)),
};

function formatChange<Field extends ChangedField>(field: Field, change: NonNullable<Changes[Field]>): string {
  const format: (value: ChangedValue<Field>) => string = CHANGE_FORMATS[field];
  const show = (value: ChangedValue<Field> | null) => (value === null ? 'none' : format(value));
  return `${field}: ${show(change.from)} → ${show(change.to)}`;
}

/** Each changed field of an audit event, as `field: from → to`. */
export function formatChanges(changes: AuditChanges): string[] {
  const fields = Object.keys(changes ?? {}) as ChangedField[];
  return fields.flatMap((field) => {
    const change = changes?.[field];
    return change === undefined ? [] : [formatChange(field, change)];
  });
}

/**
 * An expiry typed in a `datetime-local` field, read as UTC (`2027-01-31T12:00` → `2027-01-31T12:00:00.000Z`), or null
 * when it is not a valid date and time.
 */
export function utcInputToIso(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) {
    return null;
  }
  const date = new Date(`${value}Z`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** A timestamp as a `datetime-local` field in UTC shows it (`2027-01-31T12:00`). */
export function isoToUtcInput(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 16);
}

/** A grace period in words: `none`, `1 hour`, `7 days`. */
export function formatDuration(seconds: number): string {
  if (seconds === 0) {
    return 'none (the old key stops at once)';
  }
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds % size === 0) {
      const count = seconds / size;
      return `${count} ${unit}${count === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} seconds`;
}
