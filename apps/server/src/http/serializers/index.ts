// The first version's shape, which the operator CLI prints and the benchmark's references serve.
export { toApiKeyJson, toApiKeyListJson } from './api-key.js';
// The latest version's verification answer, which the benchmark's reference serves for the same keys.
export { toKeyVerificationJson } from './api-key-v2026_10_21.js';
export type { SerializeContext } from './context.js';
export { microsToRfc3339, rfc3339ToMicros } from './timestamps.js';
