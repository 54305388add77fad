import { once } from 'node:events';

/** Prints one JSON document on stdout: the only thing a command writes there. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints lines of text on stdout. */
export function printLines(lines: readonly string[]): void {
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
}

/** Writes to stdout and waits while its buffer is full, so a long output does not pile up in memory. */
export async function writeStdout(text: string): Promise<void> {
  if (!process.stdout.write(text)) {
    await once(process.stdout, 'drain');
  }
}
