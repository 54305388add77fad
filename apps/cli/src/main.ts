import { CommanderError } from 'commander';
import { EXIT, UsageError } from './errors.js';
import { buildProgram } from './program.js';

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed its message or the help. Its exit code is 0 for --help, `help <command>` and
      // --version; a missing or unknown subcommand prints the help on stderr with a non-zero code: a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
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
