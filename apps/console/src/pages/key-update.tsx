import type { UpdateApiKeyBody } from '@apikeys/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ErrorNotice } from '../components/error-notice.js';
import { refreshAfterChange } from '../query-keys.js';
import { useSession } from '../session.js';

/** Updates the key, then refreshes what shows it: the key itself, the lists, and its history. */
export function useUpdateKey(id: string) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateApiKeyBody) => client.apiKeys.update(id, body),
    onSuccess: (key) => refreshAfterChange(queryClient, key),
  });
}

/** What an action of a section came to: its message once done (announced), or the API's error when it failed. */
export function ActionOutcome({ done, failure, title }: { done: string | null; failure: unknown; title: string }) {
  return (
    <>
      <p role="status" className="muted">
        {done}
      </p>
      {failure ? <ErrorNotice error={failure} title={title} /> : null}
    </>
  );
}
