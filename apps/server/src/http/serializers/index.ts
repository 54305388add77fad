// The first version's shape, which the operator CLI prints and the benchmark's references serve.
export { toApiKeyJson, toApiKeyListJson } from './api-key.js';
export type { SerializeContext } from './context.js';
export { microsToRfc3339, rfc3339ToMicros } from './timestamps.js';
