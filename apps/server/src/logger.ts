import { type DestinationStream, type Level, type Logger, pino } from 'pino';

/** Log levels an operator may choose, plus `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = Level | 'silent';

/**
 * A JSON logger. `redact` is a second line of defence: request logs never include headers, but should a request
 * object ever be logged, its credentials are censored.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'apikeys-server' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'],
        censor: '[redacted]',
      },
    },
    // Synchronous writes keep lines in order and lose none when the process exits right after logging.
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
