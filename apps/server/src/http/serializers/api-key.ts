// The first version's `ApiKey` (`v2023_06_01`) is shared with the operator CLI, which prints the same JSON, so its
// serializer lives in @apikeys/store. The later version's shape is `api-key-v2026_10_21.ts`.
export { toApiKeyJsonV2023_06_01 as toApiKeyJson } from '@apikeys/store';
