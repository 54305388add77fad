import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The CLI as built for production (`pnpm build`; the tests' global setup builds it from the sources first). */
const MAIN = join(CLI_ROOT, 'dist', 'main.js');

/** What one run of the CLI produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `apikeys` CLI, as built, in a child process with `env` on top of this process's; `input`, when given,
 * is its standard input.
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd: CLI_ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: 50_000 },
      (error, stdout, stderr) => {
        if (child.exitCode === null) {
          reject(error ?? new Error(`apikeys ${args.join(' ')} ended without an exit code`));
          return;
        }
        resolvePromise({ code: child.exitCode, stdout, stderr });
      },
    );
    if (input !== undefined) {
      child.stdin?.end(input);
    }
  });
}

/** Runs the CLI, expects exit code 0 and nothing on stderr, and returns stdout parsed as one JSON document. */
export async function runCliJson<T>(args: readonly string[], env: NodeJS.ProcessEnv): Promise<T> {
  const result = await runCli(args, env);
  if (result.code !== 0 || result.stderr !== '') {
    throw new Error(`apikeys ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/** A SQLite database file in a fresh temporary directory, with the DATABASE_URL that names it. */
export interface TempDatabase {
  dir: string;
  path: string;
  env: { DATABASE_URL: string };
  /** The bytes of the database file and of its write-ahead log, when they exist. */
  fileBytes(): Buffer[];
  remove(): void;
}

/** Creates a temporary directory for one database; the database itself is created by the first CLI run. */
export function tempDatabase(): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'apikeys-cli-'));
  const path = join(dir, 'db.sqlite');
  return {
    dir,
    path,
    env: { DATABASE_URL: `file:${path}` },
    fileBytes: () => [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Formats the CLI promises in its output. */
export const FORMAT = {
  orgId: /^org_[A-Za-z0-9]{24}$/,
  adminKeyId: /^adminkey_[A-Za-z0-9]{24}$/,
  apiKeyId: /^apikey_[A-Za-z0-9]{24}$/,
  adminSecret: /^sk-adm-[A-Za-z0-9]{49}$/,
  apiSecret: /^sk-api-[A-Za-z0-9]{49}$/,
  createdAt: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/,
  hint: /^sk-(adm|api)-[A-Za-z0-9]{4}\.\.\.[A-Za-z0-9]{4}$/,
} as const;

/** The hint a secret must have: its 7-character prefix and next 4 characters, `...`, and its last 4 characters. */
export function expectedHint(secret: string): string {
  return `${secret.slice(0, 'sk-api-'.length + 4)}...${secret.slice(-4)}`;
}
