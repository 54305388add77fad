/**
 * The placeholders of the fuzzer's requests (`$ADMIN_KEY`, `$KEY_ID`, ...) and what each stands for in the fixture:
 * which organization it belongs to, which kind of secret it is, which state its key is in. The values are bound per
 * server (`Bindings`); these facts are the same on every server, and `createFixture` builds a state that holds them.
 */

/** The secrets of the fixture. None may ever appear in a response or a log line, nor any part of them. */
export const SECRET_PLACEHOLDERS = [
  '$ADMIN_KEY',
  '$OTHER_ADMIN_KEY',
  '$DISABLED_ADMIN_KEY',
  '$VERIFIER_KEY',
  '$OTHER_VERIFIER_KEY',
  '$DISABLED_VERIFIER_KEY',
  '$API_KEY_SECRET',
  '$INACTIVE_KEY_SECRET',
  '$ARCHIVED_KEY_SECRET',
  '$EXPIRED_KEY_SECRET',
  '$OTHER_API_KEY_SECRET',
] as const;

/** The API key IDs of the fixture: keys of the caller's organization in every state, and one of another. */
export const KEY_ID_PLACEHOLDERS = [
  '$KEY_ID',
  '$OLDER_KEY_ID',
  '$INACTIVE_KEY_ID',
  '$ARCHIVED_KEY_ID',
  '$EXPIRED_KEY_ID',
  '$OTHER_ORG_KEY_ID',
] as const;

/** Every ID of the fixture: API keys, an audit event of each organization, and each organization's admin key. */
export const ID_PLACEHOLDERS = [
  ...KEY_ID_PLACEHOLDERS,
  '$EVENT_ID',
  '$OTHER_ORG_EVENT_ID',
  '$ADMIN_KEY_ID',
  '$OTHER_ADMIN_KEY_ID',
] as const;

/** Every placeholder; `$HOST` is the server's `host:port`. */
export const PLACEHOLDERS = [...SECRET_PLACEHOLDERS, ...ID_PLACEHOLDERS, '$HOST'] as const;

/** A placeholder of a secret. */
export type SecretPlaceholder = (typeof SECRET_PLACEHOLDERS)[number];
/** A placeholder of an API key's ID. */
export type KeyIdPlaceholder = (typeof KEY_ID_PLACEHOLDERS)[number];
/** A placeholder of an ID. */
export type IdPlaceholder = (typeof ID_PLACEHOLDERS)[number];
/** Any placeholder. */
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** The value of each placeholder on the server the fuzzer talks to. */
export type Bindings = Record<Placeholder, string>;

/** The fixture's two organizations: the one of `$ADMIN_KEY`, and another. */
export type Organization = 'own' | 'other';

/** A key's status as the latest version shows it (the first shows `expired` as `inactive`). */
export type KeyState = 'active' | 'inactive' | 'archived' | 'expired';

/** What a secret of the fixture is: an admin key, a verifier key or an API key, of which organization. */
export interface SecretFact {
  kind: 'admin' | 'verifier' | 'api';
  organization: Organization;
  /** An admin or verifier key that authenticates; API keys never do. */
  active: boolean;
  /** For an API key's secret, the placeholder of its key's ID. */
  key?: KeyIdPlaceholder;
}

/** What each secret placeholder stands for. */
export const SECRETS: Readonly<Record<SecretPlaceholder, SecretFact>> = {
  $ADMIN_KEY: { kind: 'admin', organization: 'own', active: true },
  $OTHER_ADMIN_KEY: { kind: 'admin', organization: 'other', active: true },
  $DISABLED_ADMIN_KEY: { kind: 'admin', organization: 'own', active: false },
  $VERIFIER_KEY: { kind: 'verifier', organization: 'own', active: true },
  $OTHER_VERIFIER_KEY: { kind: 'verifier', organization: 'other', active: true },
  $DISABLED_VERIFIER_KEY: { kind: 'verifier', organization: 'own', active: false },
  $API_KEY_SECRET: { kind: 'api', organization: 'own', active: false, key: '$KEY_ID' },
  $INACTIVE_KEY_SECRET: { kind: 'api', organization: 'own', active: false, key: '$INACTIVE_KEY_ID' },
  $ARCHIVED_KEY_SECRET: { kind: 'api', organization: 'own', active: false, key: '$ARCHIVED_KEY_ID' },
  $EXPIRED_KEY_SECRET: { kind: 'api', organization: 'own', active: false, key: '$EXPIRED_KEY_ID' },
  $OTHER_API_KEY_SECRET: { kind: 'api', organization: 'other', active: false, key: '$OTHER_ORG_KEY_ID' },
};

/** What an API key of the fixture is: its organization, and its state whenever a request meets it. */
export interface KeyFact {
  organization: Organization;
  state: KeyState;
}

/** What each API key ID placeholder stands for. */
export const KEYS: Readonly<Record<KeyIdPlaceholder, KeyFact>> = {
  $KEY_ID: { organization: 'own', state: 'active' },
  $OLDER_KEY_ID: { organization: 'own', state: 'active' },
  $INACTIVE_KEY_ID: { organization: 'own', state: 'inactive' },
  $ARCHIVED_KEY_ID: { organization: 'own', state: 'archived' },
  $EXPIRED_KEY_ID: { organization: 'own', state: 'expired' },
  $OTHER_ORG_KEY_ID: { organization: 'other', state: 'active' },
};

/** Which organization each ID placeholder belongs to. */
export const ID_ORGANIZATIONS: Readonly<Record<IdPlaceholder, Organization>> = {
  ...Object.fromEntries(Object.entries(KEYS).map(([id, fact]) => [id, fact.organization])),
  $EVENT_ID: 'own',
  $OTHER_ORG_EVENT_ID: 'other',
  $ADMIN_KEY_ID: 'own',
  $OTHER_ADMIN_KEY_ID: 'other',
} as Record<IdPlaceholder, Organization>;

/** The placeholder whose value `value` is, if any (`bindings` of the server in use). */
export function placeholderOf<T extends Placeholder>(
  value: string,
  among: readonly T[],
  bindings: Bindings,
): T | undefined {
  return among.find((name) => bindings[name] === value);
}
