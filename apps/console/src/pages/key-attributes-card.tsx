import type { ApiKey } from '@apikeys/client';
import { type FormEvent, useId, useState } from 'react';
import { type AttributeProblems, KeyAttributeFields } from '../components/key-attribute-fields.js';
import { changedAttributes, metadataText, permissionsText, readMetadata, readPermissions } from '../key-attributes.js';
import { ActionOutcome, useUpdateKey } from './key-update.js';

/** What a save announces, by the fields it sent. */
function savedMessage(sent: { permissions?: unknown; metadata?: unknown }): string {
  if (sent.permissions !== undefined && sent.metadata !== undefined) {
    return 'The permissions and the metadata are saved.';
  }
  return sent.permissions === undefined ? 'The metadata is saved.' : 'The permissions are saved.';
}

/**
 * Edits the permissions and the metadata, each replaced as a whole; both are checked against the spec's limits, and
 * only what changed is sent.
 */
export function KeyAttributesCard({ apiKey }: { apiKey: ApiKey }) {
  const update = useUpdateKey(apiKey.id);
  const [problems, setProblems] = useState<AttributeProblems>({});
  const [done, setDone] = useState<string | null>(null);
  const id = useId();

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const permissions = readPermissions(String(form.get('permissions') ?? ''));
    const metadata = readMetadata(String(form.get('metadata') ?? ''));
    setDone(null);
    const found: AttributeProblems = {
      ...('problem' in permissions ? { permissions: permissions.problem } : {}),
      ...('problem' in metadata ? { metadata: metadata.problem } : {}),
    };
    setProblems(found);
    if ('problem' in permissions || 'problem' in metadata) {
      update.reset();
      return;
    }
    const changes = changedAttributes(apiKey, permissions.value, metadata.value);
    if (changes.permissions === undefined && changes.metadata === undefined) {
      update.reset();
      setDone('Nothing to save: the permissions and the metadata are as they were.');
      return;
    }
    update.mutate(changes, { onSuccess: () => setDone(savedMessage(changes)) });
  }

  if (apiKey.status === 'expired') {
    return null;
  }
  return (
    <section aria-labelledby="attributes-heading" className="card card-wide">
      <h2 id="attributes-heading">Permissions and metadata</h2>
      <form className="form" onSubmit={submit} noValidate>
        <KeyAttributeFields
          id={id}
          problems={problems}
          // One name a line, as the field shows the saved value again after each save.
          initial={{ permissions: permissionsText(apiKey.permissions), metadata: metadataText(apiKey.metadata) }}
        />
        <button type="submit" className="button" disabled={update.isPending}>
          Save permissions and metadata
        </button>
      </form>
      <ActionOutcome
        done={done}
        failure={update.isError ? update.error : null}
        title="Saving the permissions and metadata failed"
      />
    </section>
  );
}
