export { toApiKeyJson, toApiKeyListJson } from './api-key.js';
export { microsToRfc3339 } from './timestamps.js';
