import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether something accepts TCP connections on the port of 127.0.0.1 now. */
function accepts(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Resolves once something accepts TCP connections on the port of 127.0.0.1. Rejects, naming `what`, after
 * `timeoutMs`, or as soon as `gone()` says why the process that should listen has gone.
 */
export async function waitForPort(
  what: string,
  port: number,
  timeoutMs: number,
  gone: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await accepts(port))) {
    const reason = gone();
    if (reason !== undefined || Date.now() > deadline) {
      throw new Error(`${what} does not listen on port ${port}: ${reason ?? `not within ${timeoutMs} ms`}`);
    }
    await sleep(50);
  }
}
