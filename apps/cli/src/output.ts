/** Prints one JSON document on stdout: the only thing a command writes there. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
