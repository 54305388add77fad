import type { OperationHandler } from '../typed-handler.js';

/** `GET /health`: the process is alive. It never touches the database. */
export function getHealth(): OperationHandler<'getHealth'> {
  return async () => ({ status: 'ok' });
}
