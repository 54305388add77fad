import type { CreateApiKeyBody } from '@apikeys/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ErrorNotice } from '../components/error-notice.js';
import { FieldProblem } from '../components/field-problem.js';
import { type AttributeProblems, KeyAttributeFields } from '../components/key-attribute-fields.js';
import { SecretReveal } from '../components/secret-reveal.js';
import { utcInputToIso } from '../format.js';
import { readMetadata, readPermissions } from '../key-attributes.js';
import { nameProblem } from '../key-name.js';
import { usePageTitle } from '../page-title.js';
import { refreshAfterChange } from '../query-keys.js';
import { useSession } from '../session.js';

interface Problems extends AttributeProblems {
  name?: string;
  expires_at?: string;
}

/** The form's fields as the body of `createApiKey`, or what is wrong with them. */
function readForm(form: FormData): { body: CreateApiKeyBody } | { problems: Problems } {
  const name = String(form.get('name') ?? '');
  const workspace = String(form.get('workspace_id') ?? '').trim();
  const expiry = String(form.get('expires_at') ?? '');
  const problems: Problems = {};
  const nameIssue = nameProblem(name);
  if (nameIssue !== null) {
    problems.name = nameIssue;
  }
  const expiresAt = expiry === '' ? null : utcInputToIso(expiry);
  if (expiry !== '' && expiresAt === null) {
    problems.expires_at = 'Enter a date and a time, or leave the field empty.';
  }
  const permissions = readPermissions(String(form.get('permissions') ?? ''));
  if ('problem' in permissions) {
    problems.permissions = permissions.problem;
  }
  const metadata = readMetadata(String(form.get('metadata') ?? ''));
  if ('problem' in metadata) {
    problems.metadata = metadata.problem;
  }
  if ('problem' in permissions || 'problem' in metadata || Object.keys(problems).length > 0) {
    return { problems };
  }
  return {
    body: {
      name,
      ...(workspace === '' ? {} : { workspace_id: workspace }),
      ...(expiresAt === null ? {} : { expires_at: expiresAt }),
      // Empty fields are left out: a key is created with no permissions and no metadata.
      ...(permissions.value.length === 0 ? {} : { permissions: permissions.value }),
      ...(Object.keys(metadata.value).length === 0 ? {} : { metadata: metadata.value }),
    },
  };
}

/** Creates a key; its secret is shown once, on this page, and discarded when the page is left. */
export function CreateKey() {
  usePageTitle('Create a key');
  const { client } = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const [problems, setProblems] = useState<Problems>({});
  const createdHeading = useRef<HTMLHeadingElement>(null);
  const nameField = useRef<HTMLInputElement>(null);
  const another = useRef(false);
  const create = useMutation({
    mutationFn: (body: CreateApiKeyBody) => client.apiKeys.create(body),
    // The answer holds the secret: drop it from the mutation cache as soon as this page is left.
    gcTime: 0,
    onSuccess: () => refreshAfterChange(queryClient, null),
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const read = readForm(new FormData(event.currentTarget));
    if ('problems' in read) {
      setProblems(read.problems);
      return;
    }
    setProblems({});
    create.mutate(read.body);
  }

  // The form and the result replace each other: the focus follows, to the result's heading, or back to the name.
  useEffect(() => {
    if (create.data) {
      createdHeading.current?.focus();
    } else if (another.current) {
      another.current = false;
      nameField.current?.focus();
    }
  }, [create.data]);

  if (create.data) {
    const created = create.data;
    return (
      <>
        <h1 ref={createdHeading} tabIndex={-1}>
          Key created
        </h1>
        <p>
          <Link to={`/keys/${encodeURIComponent(created.id)}`}>{created.name}</Link> ({created.id}) is active.
        </p>
        <SecretReveal secret={created.key} keyName={created.name} />
        <p>
          <button
            type="button"
            className="button button-secondary"
            onClick={() => {
              another.current = true;
              create.reset();
            }}
          >
            Create another key
          </button>
        </p>
      </>
    );
  }

  return (
    <>
      <h1>Create a key</h1>
      <form className="card form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input
            ref={nameField}
            id={`${id}-name`}
            name="name"
            autoComplete="off"
            aria-invalid={problems.name !== undefined}
            aria-describedby={problems.name === undefined ? undefined : `${id}-name-problem`}
            required
          />
          <FieldProblem id={`${id}-name-problem`} problem={problems.name} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-workspace`}>Workspace ID (optional)</label>
          <input
            id={`${id}-workspace`}
            name="workspace_id"
            placeholder="wrkspc_..."
            spellCheck={false}
            autoComplete="off"
            aria-describedby={`${id}-workspace-help`}
          />
          <p id={`${id}-workspace-help`} className="muted">
            Empty: the organization's default workspace.
          </p>
        </div>
        <div className="field">
          <label htmlFor={`${id}-expires`}>Expires at, UTC (optional)</label>
          <input
            id={`${id}-expires`}
            name="expires_at"
            type="datetime-local"
            aria-invalid={problems.expires_at !== undefined}
            aria-describedby={`${id}-expires-help${problems.expires_at === undefined ? '' : ` ${id}-expires-problem`}`}
          />
          <p id={`${id}-expires-help`} className="muted">
            Empty: the key never expires.
          </p>
          <FieldProblem id={`${id}-expires-problem`} problem={problems.expires_at} />
        </div>
        <KeyAttributeFields id={id} problems={problems} optional />
        <button type="submit" className="button" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create the key'}
        </button>
        {create.isError ? <ErrorNotice error={create.error} title="Creating the key failed" /> : null}
      </form>
    </>
  );
}
