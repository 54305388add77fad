import { CommanderError } from 'commander';
import { CommandError, EXIT, UsageError } from './errors.js';
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
    if (error instanceof CommandError && error.hint !== undefined) {
      process.stderr.write(`apikeys: hint: ${error.hint}\n`);
    }
    return EXIT.failure;
  }
}

// A reader that stops early (`apikeys keys list --all | head`) closes the pipe: stop quietly, as other tools do,
// rather than crash on the write error or wait forever for a 'drain' that never comes.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') {
    process.exit(EXIT.ok);
  }
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
