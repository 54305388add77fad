import { type DestinationStream, type Level, type Logger, pino } from 'pino';

/** Log levels an operator may choose, plus `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = Level | 'silent';

// Lines are collected up to this many bytes and written with one system call, instead of one call per line.
const LOG_BUFFER_BYTES = 4096;
// A line waits at most this long for its buffer to fill: a quiet server still logs promptly.
const LOG_FLUSH_INTERVAL_MS = 200;

/**
 * Standard output with lines buffered (see the constants above). Writes are synchronous, from the main thread:
 * lines reach the output in the order they were logged, and whatever is buffered is written when the process exits,
 * also through process.exit() or an uncaught exception. Only a SIGKILL can lose the last 200 ms of lines.
 */
function bufferedStdout(): DestinationStream {
  const stdout = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  process.on('exit', () => stdout.flushSync());
  return stdout;
}

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
    destination ?? bufferedStdout(),
  );
}
