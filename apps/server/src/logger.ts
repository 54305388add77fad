import { createRequire } from 'node:module';
import { type DestinationStream, type Level, type Logger, pino } from 'pino';

/** Log levels an operator may choose, plus `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = Level | 'silent';

/** How lines are written: JSON, human-readable, or human-readable only when standard output is a terminal. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

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

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/**
 * pino-pretty, when installed. It is a development dependency: a production install (`pnpm install --prod`) lacks it
 * and logs JSON. It is loaded with `require` at run time so that the production bundle neither includes nor needs it.
 */
function prettyFactory(): PrettyFactory | undefined {
  try {
    return createRequire(import.meta.url)('pino-pretty') as PrettyFactory;
  } catch {
    return undefined;
  }
}

/**
 * Where the server's lines go: human-readable lines on a terminal (`auto`) or when asked (`pretty`), JSON otherwise.
 * Pretty lines are written synchronously, so they too are complete when the process exits.
 */
export function logDestination(format: LogFormat, isTerminal = process.stdout.isTTY === true): DestinationStream {
  const pretty = format === 'pretty' || (format === 'auto' && isTerminal) ? prettyFactory() : undefined;
  if (format === 'pretty' && !pretty) {
    process.stderr.write(
      'apikeys-server: LOG_FORMAT=pretty needs pino-pretty (a development dependency); logging JSON\n',
    );
  }
  return pretty
    ? pretty({ sync: true, colorize: isTerminal, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' })
    : bufferedStdout();
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
        paths: [
          'req.headers["x-api-key"]',
          'headers["x-api-key"]',
          'req.headers.authorization',
          'headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? bufferedStdout(),
  );
}
