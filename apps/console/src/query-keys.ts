import type { ApiKey, ListApiKeysQuery } from '@apikeys/client';
import type { QueryClient } from '@tanstack/react-query';

/**
 * The keys of the cached answers, in one place: each names its operation and its arguments, and the shorter keys
 * match every longer one (`apiKeyLists` every page of every filter, `auditEventsOf` every page of a key's history).
 */
export const queryKeys = {
  apiKeyLists: ['api-keys'],
  apiKeyList: (query: ListApiKeysQuery) => ['api-keys', query],
  apiKey: (id: string) => ['api-key', id],
  auditEventsOf: (keyId: string) => ['audit-events', keyId],
  auditEventsPage: (keyId: string, afterId: string | null) => ['audit-events', keyId, afterId],
} as const;

/**
 * After a key changed (updated or rotated) or appeared (`key` null): keeps its new state, and refetches what else
 * shows it, the lists and its history.
 */
export function refreshAfterChange(queryClient: QueryClient, key: ApiKey | null): void {
  if (key !== null) {
    queryClient.setQueryData(queryKeys.apiKey(key.id), key);
    void queryClient.invalidateQueries({ queryKey: queryKeys.auditEventsOf(key.id) });
  }
  void queryClient.invalidateQueries({ queryKey: queryKeys.apiKeyLists });
}
