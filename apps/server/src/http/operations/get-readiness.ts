import type { ApiVersion } from '@apikeys/api-types';
import type { Readiness } from '../../health/readiness.js';
import { type OperationHandler, withStatus } from '../typed-handler.js';

/** `GET /ready`: 200 when every readiness check passes, 503 with the checks otherwise. */
export function getReadiness(readiness: Readiness): OperationHandler<ApiVersion, 'getReadiness'> {
  return async () => {
    const report = await readiness.report();
    return report.status === 'ready' ? report : withStatus(503, report);
  };
}
