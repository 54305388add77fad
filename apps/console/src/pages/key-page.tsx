import type { ApiKey, RotatedApiKey, UpdateApiKeyBody } from '@apikeys/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, Fragment, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorNotice } from '../components/error-notice.js';
import { FieldProblem } from '../components/field-problem.js';
import { MetadataView, PermissionList } from '../components/key-attribute-view.js';
import { SecretReveal } from '../components/secret-reveal.js';
import { StatusBadge } from '../components/status-badge.js';
import { TimeText } from '../components/time-text.js';
import {
  formatCreator,
  formatDuration,
  formatPrincipal,
  formatScope,
  isoToUtcInput,
  utcInputToIso,
} from '../format.js';
import { nameProblem } from '../key-name.js';
import { usePageTitle } from '../page-title.js';
import { queryKeys, refreshAfterChange } from '../query-keys.js';
import { GRACE_PERIODS } from '../rotation.js';
import { useSession } from '../session.js';
import { AuditHistory } from './audit-history.js';
import { KeyAttributesCard } from './key-attributes-card.js';
import { ActionOutcome, useUpdateKey } from './key-update.js';

function Rename({ apiKey }: { apiKey: ApiKey }) {
  const update = useUpdateKey(apiKey.id);
  const [editing, setEditing] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  // Where the focus goes when the form closes, which unmounts the field that had it: the new name after saving,
  // the Rename button after cancelling.
  const focusOnClose = useRef<'heading' | 'button' | null>(null);
  useEffect(() => {
    if (!editing && focusOnClose.current !== null) {
      (focusOnClose.current === 'heading' ? heading : renameButton).current?.focus();
      focusOnClose.current = null;
    }
  }, [editing]);

  function close(saved: boolean) {
    focusOnClose.current = saved ? 'heading' : 'button';
    setEditing(false);
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('name') ?? '');
    const found = nameProblem(name);
    setProblem(found);
    if (found === null) {
      update.mutate({ name }, { onSuccess: () => close(true) });
    }
  }

  if (!editing) {
    return (
      <div className="name-row">
        <h1 ref={heading} tabIndex={-1}>
          {apiKey.name}
        </h1>
        <button
          ref={renameButton}
          type="button"
          className="button button-secondary"
          onClick={() => {
            update.reset();
            setProblem(null);
            setEditing(true);
          }}
        >
          Rename
        </button>
      </div>
    );
  }
  return (
    <>
      <h1 className="visually-hidden">{apiKey.name}</h1>
      <form
        className="rename"
        onSubmit={submit}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            close(false);
          }
        }}
        noValidate
      >
        <label htmlFor={`${id}-name`}>New name</label>
        <div className="inline-fields">
          <input
            id={`${id}-name`}
            name="name"
            defaultValue={apiKey.name}
            aria-invalid={problem !== null}
            aria-describedby={problem === null ? undefined : `${id}-problem`}
            // The field appears where the name was, in answer to the Rename button: focus follows it.
            // biome-ignore lint/a11y/noAutofocus: the user asked for this field by pressing Rename
            autoFocus
          />
          <button type="submit" className="button" disabled={update.isPending}>
            Save name
          </button>
          <button type="button" className="button button-secondary" onClick={() => close(false)}>
            Cancel
          </button>
        </div>
        <FieldProblem id={`${id}-problem`} problem={problem} />
        {update.isError ? <ErrorNotice error={update.error} title="Renaming failed" /> : null}
      </form>
    </>
  );
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="field-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function KeyFields({ apiKey }: { apiKey: ApiKey }) {
  return (
    <dl className="fields">
      <Field label="ID">
        <code>{apiKey.id}</code>
      </Field>
      <Field label="Status">
        <StatusBadge status={apiKey.status} />
      </Field>
      <Field label="Scope">
        {apiKey.scope.type === 'workspace' ? 'Workspace ' : null}
        <span className="mono">{formatScope(apiKey.scope)}</span>
      </Field>
      <Field label="Acts as">{formatPrincipal(apiKey.principal)}</Field>
      <Field label="Created">
        <TimeText value={apiKey.created_at} />
      </Field>
      <Field label="Created by">
        <span className="mono">{formatCreator(apiKey.created_by)}</span>
      </Field>
      <Field label="Expires">
        <TimeText value={apiKey.expires_at} fallback="Never" />
      </Field>
      <Field label="Last used">
        <TimeText value={apiKey.last_used_at} fallback="Never" />
      </Field>
      <Field label="Secret hint">
        <code>{apiKey.partial_key_hint ?? '—'}</code>
      </Field>
      <Field label="Permissions">
        <PermissionList permissions={apiKey.permissions} />
      </Field>
      <Field label="Metadata">
        <MetadataView metadata={apiKey.metadata} />
      </Field>
    </dl>
  );
}

/** The status changes offered by a button each, to a key whose status is one of `from`, and what is announced after. */
const STATUS_CHANGES: readonly {
  label: string;
  to: NonNullable<UpdateApiKeyBody['status']>;
  from: readonly ApiKey['status'][];
  message: string;
}[] = [
  {
    label: 'Deactivate',
    to: 'inactive',
    from: ['active'],
    message: 'The key is deactivated: requests with it are refused.',
  },
  { label: 'Reactivate', to: 'active', from: ['inactive', 'archived'], message: 'The key is active again.' },
];

/** Deactivate, reactivate and archive, each with the API's error when it fails. */
function StatusActions({ apiKey }: { apiKey: ApiKey }) {
  const update = useUpdateKey(apiKey.id);
  const [confirmArchive, setConfirmArchive] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  // The button pressed (or the dialog's) is replaced by the other ones: the focus goes to the section's heading, and
  // the message is announced.
  function setStatus(status: NonNullable<UpdateApiKeyBody['status']>, message: string) {
    setDone(null);
    update.mutate(
      { status },
      {
        onSuccess: () => {
          setDone(message);
          heading.current?.focus();
        },
      },
    );
  }

  const expired = apiKey.status === 'expired';
  return (
    <section aria-labelledby="status-heading" className="card">
      <h2 id="status-heading" ref={heading} tabIndex={-1}>
        Status
      </h2>
      {expired ? <p className="muted">This key has expired: it can only be renamed or archived.</p> : null}
      <div className="actions">
        {STATUS_CHANGES.filter(({ from }) => from.includes(apiKey.status)).map(({ label, to, message }) => (
          <button
            key={to}
            type="button"
            className="button button-secondary"
            disabled={update.isPending}
            onClick={() => setStatus(to, message)}
          >
            {label}
          </button>
        ))}
        {apiKey.status === 'archived' ? null : (
          <button
            type="button"
            className="button button-danger"
            disabled={update.isPending}
            onClick={() => setConfirmArchive(true)}
          >
            Archive…
          </button>
        )}
      </div>
      <ConfirmDialog
        open={confirmArchive}
        title={`Archive “${apiKey.name}”?`}
        confirmLabel="Archive the key"
        onCancel={() => setConfirmArchive(false)}
        onConfirm={() => {
          setConfirmArchive(false);
          setStatus('archived', 'The key is archived.');
        }}
      >
        <p>
          Archiving stops the key at once: every request made with it is refused. The key stays in the list, with its
          history, for the record, and an archived key cannot be rotated.
        </p>
      </ConfirmDialog>
      <ActionOutcome done={done} failure={update.isError ? update.error : null} title="Changing the status failed" />
    </section>
  );
}

/** Sets or removes the expiry; the time is typed in UTC, as the console shows every time. */
function Expiry({ apiKey }: { apiKey: ApiKey }) {
  const update = useUpdateKey(apiKey.id);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);

  // Removing the expiry removes its button: the focus goes to the section's heading, and the message is announced.
  function change(expiresAt: string | null, message: string) {
    setDone(null);
    setProblem(null);
    update.mutate(
      { expires_at: expiresAt },
      {
        onSuccess: () => {
          setDone(message);
          heading.current?.focus();
        },
      },
    );
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const expiresAt = utcInputToIso(String(new FormData(event.currentTarget).get('expires_at') ?? ''));
    if (expiresAt === null) {
      setDone(null);
      setProblem('Enter a date and a time.');
      return;
    }
    change(expiresAt, 'The expiry is set.');
  }

  if (apiKey.status === 'expired') {
    return null;
  }
  return (
    <section aria-labelledby="expiry-heading" className="card">
      <h2 id="expiry-heading" ref={heading} tabIndex={-1}>
        Expiry
      </h2>
      <form onSubmit={submit} noValidate>
        <label htmlFor={`${id}-expires`}>Expires at (UTC)</label>
        <div className="inline-fields">
          <input
            // Keyed by the expiry, so that the field shows the current one, to the minute, after each change.
            key={apiKey.expires_at ?? 'none'}
            defaultValue={apiKey.expires_at === null ? '' : isoToUtcInput(apiKey.expires_at)}
            id={`${id}-expires`}
            name="expires_at"
            type="datetime-local"
            aria-invalid={problem !== null}
            aria-describedby={problem === null ? undefined : `${id}-problem`}
          />
          <button type="submit" className="button" disabled={update.isPending}>
            Set expiry
          </button>
          {apiKey.expires_at === null ? null : (
            <button
              type="button"
              className="button button-secondary"
              disabled={update.isPending}
              onClick={() => change(null, 'The key no longer expires.')}
            >
              Remove expiry
            </button>
          )}
        </div>
        <FieldProblem id={`${id}-problem`} problem={problem} />
      </form>
      <ActionOutcome done={done} failure={update.isError ? update.error : null} title="Changing the expiry failed" />
    </section>
  );
}

/** Rotates the key with a grace period; the new secret is shown once, here. */
function Rotate({ apiKey }: { apiKey: ApiKey }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const rotatedHeading = useRef<HTMLHeadingElement>(null);
  const rotate = useMutation({
    mutationFn: (gracePeriodSeconds: number) =>
      client.apiKeys.rotate(apiKey.id, { grace_period_seconds: gracePeriodSeconds }),
    // The answer holds a secret: drop it from the mutation cache as soon as this component is gone.
    gcTime: 0,
    onSuccess: (rotated: RotatedApiKey) => refreshAfterChange(queryClient, rotated.rotated_api_key),
  });

  // The form is replaced by the new secret: the focus goes to its heading.
  useEffect(() => {
    if (rotate.data) {
      rotatedHeading.current?.focus();
    }
  }, [rotate.data]);

  if (rotate.data) {
    const created = rotate.data;
    return (
      <section aria-labelledby="rotate-heading" className="card">
        <h2 id="rotate-heading" ref={rotatedHeading} tabIndex={-1}>
          Rotated
        </h2>
        <p>
          The new key is <Link to={`/keys/${encodeURIComponent(created.id)}`}>{created.id}</Link>. This key{' '}
          {created.rotated_api_key.expires_at === null ? (
            'keeps working.'
          ) : (
            <>
              keeps working until <TimeText value={created.rotated_api_key.expires_at} />.
            </>
          )}
        </p>
        <SecretReveal secret={created.key} keyName={created.name} />
      </section>
    );
  }
  if (apiKey.status === 'archived' || apiKey.status === 'expired') {
    return null;
  }
  return (
    <section aria-labelledby="rotate-heading" className="card">
      <h2 id="rotate-heading">Rotate</h2>
      <p className="muted">
        Rotating makes a new key with a new secret (same name, scope and expiry). The old key keeps working for the
        grace period, then expires.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          rotate.mutate(Number(new FormData(event.currentTarget).get('grace')));
        }}
      >
        <label htmlFor={`${id}-grace`}>Grace period</label>
        <div className="inline-fields">
          <select id={`${id}-grace`} name="grace" defaultValue="0">
            {GRACE_PERIODS.map((seconds) => (
              <option key={seconds} value={seconds}>
                {formatDuration(seconds)}
              </option>
            ))}
          </select>
          <button type="submit" className="button" disabled={rotate.isPending}>
            Rotate the key
          </button>
        </div>
      </form>
      {rotate.isError ? <ErrorNotice error={rotate.error} title="Rotating failed" /> : null}
    </section>
  );
}

/** A key's page: every field, the actions, and its audit history. */
export function KeyPage() {
  const { client } = useSession();
  const { keyId = '' } = useParams();
  const result = useQuery({
    queryKey: queryKeys.apiKey(keyId),
    queryFn: ({ signal }) => client.apiKeys.retrieve(keyId, { signal }),
  });
  usePageTitle(result.data ? `Key ${result.data.name}` : 'Key');

  return (
    <>
      <p>
        <Link to="/">← Back to the keys</Link>
      </p>
      {result.isPending ? (
        <p className="placeholder" role="status">
          Loading the key…
        </p>
      ) : null}
      {result.isError ? (
        <>
          <h1>Key {keyId}</h1>
          <ErrorNotice error={result.error} title="The key could not be loaded" />
        </>
      ) : null}
      {result.data ? (
        // Keyed by the key: after a rotation, the link to the new key shows a fresh page, without the old secret.
        <Fragment key={result.data.id}>
          <Rename apiKey={result.data} />
          <KeyFields apiKey={result.data} />
          <div className="cards">
            <StatusActions apiKey={result.data} />
            <Expiry apiKey={result.data} />
            <Rotate apiKey={result.data} />
            <KeyAttributesCard apiKey={result.data} />
          </div>
          <AuditHistory keyId={result.data.id} />
        </Fragment>
      ) : null}
    </>
  );
}
