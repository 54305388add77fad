import type { ApiVersion } from '@apikeys/api-types';
import type { OperationHandler } from '../typed-handler.js';

/** `GET /health`: the process is alive. It never touches the database. */
export function getHealth(): OperationHandler<ApiVersion, 'getHealth'> {
  return async () => ({ status: 'ok' });
}
