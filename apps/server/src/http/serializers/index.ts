// The RFC 3339 conversions of the API's timestamps (in @apikeys/store, which the CLI shares).
export { microsToRfc3339, rfc3339ToMicros } from '@apikeys/store';
// The first version's shape, which the operator CLI prints and the benchmark's references serve.
export { toApiKeyJson } from './api-key.js';
export { toApiKeyListJson } from './api-key-list.js';
export type { SerializeContext } from './context.js';
// The latest version's verification answer, which the benchmark's reference serves for the same keys.
export { toKeyVerificationJson } from './key-verification.js';
