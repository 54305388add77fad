import { CommanderError } from 'commander';
import { EXIT, UsageError } from './errors.js';
import { buildProgram } from './program.js';

// Help and version output end the program successfully; every other parse error is a usage error.
const SUCCESSFUL_EXITS = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed its message on stderr.
      return SUCCESSFUL_EXITS.has(error.code) ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`apikeys: error: ${error.message}\n`);
      return EXIT.usage;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`apikeys: error: ${message}\n`);
    return EXIT.failure;
  }
}

process.exitCode = await main(process.argv.slice(2));
