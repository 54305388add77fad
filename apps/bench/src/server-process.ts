import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type StartedServerProcess, startServerProcess } from '@apikeys/server/testing';

/** How to start one HTTP server under test: a bundled JavaScript entry point run with plain Node, as in production. */
export interface ServerCommand {
  /** Entry point, relative to the repository root (built by `pnpm bench` before it runs). */
  script: string;
  env: Record<string, string>;
  /** When set, the server runs under `node --cpu-prof` and writes its profile here on exit. */
  cpuProfileDir?: string | undefined;
}

// Every target starts side by side: on a loaded machine, the last of a dozen took more than a minute to be ready.
const START_TIMEOUT_MS = 180_000;

/**
 * The Node flags of the root `start` script (`node <flags> apps/server/dist/main.js`), read from package.json so
 * that the bench runs the server exactly as operators do. The references get the same flags, so figures compare.
 */
export function startNodeFlags(repoRoot: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const match = /(?:^|&&\s*)node((?:\s+--\S+)*)\s+apps\/server\/dist\/main\.js\b/.exec(scripts.start ?? '');
  if (!match) {
    throw new Error(
      `package.json: the start script must run "node [flags] apps/server/dist/main.js": ${scripts.start}`,
    );
  }
  return match[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
}

/**
 * Starts a server as a child process (the test support's starter), with the start script's Node flags, this
 * process's environment and its standard output appended to `logFile`, and resolves once it is listening.
 */
export function startServer(command: ServerCommand, repoRoot: string, logFile: string): Promise<StartedServerProcess> {
  if (!existsSync(join(repoRoot, command.script))) {
    throw new Error(`${command.script} does not exist: build it first (pnpm bench does, or pnpm build)`);
  }
  const profiling = command.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${command.cpuProfileDir}`] : [];
  return startServerProcess(
    {
      script: { path: command.script, cwd: repoRoot, nodeFlags: [...startNodeFlags(repoRoot), ...profiling] },
      env: command.env,
      inheritEnv: true,
      logFile,
    },
    START_TIMEOUT_MS,
  );
}
