import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BaseBuild, SERVER_SCRIPT } from '../targets.js';

/**
 * Where finished builds are kept: one directory per commit under the OS temp dir, outside every checkout, so that
 * the repository's tracked files and git metadata stay untouched (no `git worktree add`) and every checkout of the
 * repository on this machine reuses the same build of a commit.
 */
export const BASE_BUILDS_DIR = join(tmpdir(), 'apikeys-bench-base');

/** Written last into a checkout whose install and build succeeded; a directory without it is never reused. */
const READY_FILE = '.bench-base-ready';

/** What `pnpm bench` builds before it runs, here in the base's checkout: the server's bundle and the bench's own. */
const BUILD_FILTER = '@apikeys/bench...';

/** The base's bench seeding, which `seed-worker.ts` runs on the base's store code. */
export const BASE_SEED_MODULE = 'apps/bench/src/seed.ts';

const execFileAsync = promisify(execFile);

async function git(repoRoot: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', ['-C', repoRoot, ...args]);
  return stdout.trim();
}

/** Runs a command in `cwd` with its output appended to `logFile`; rejects, naming the log, when it fails. */
function run(command: string, args: readonly string[], cwd: string, logFile: string): Promise<void> {
  const log = openSync(logFile, 'a');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', log, log] });
    child.once('error', (error) => {
      closeSync(log);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      closeSync(log);
      if (code === 0) {
        resolve();
      } else {
        const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
        reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}); ${logFile}:\n${tail}`));
      }
    });
  });
}

/** The package manager a checkout declares (`packageManager` in its package.json), as `npx` takes it. */
function packageManagerOf(root: string): string {
  const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    packageManager?: string;
  };
  if (!packageManager?.startsWith('pnpm@')) {
    throw new Error(`${root}/package.json names no pnpm version in "packageManager" (got ${packageManager})`);
  }
  return packageManager;
}

/**
 * The commit `ref` names in the repository at `repoRoot`, checked out clean (`git archive`: tracked files only, as
 * committed), installed with its own lockfile (`pnpm install --frozen-lockfile`, quick from the machine's pnpm store)
 * and built as `pnpm bench` builds (`turbo run build --filter=@apikeys/bench...`: the server's bundle, and the
 * references' and the gateway's). A finished build of the commit is reused. The build happens in a directory of its
 * own, renamed into place once finished, so that a run stopped half-way or a second bench building the same commit
 * never leaves a half-built checkout where the next run would reuse it.
 */
export async function prepareBaseBuild(
  repoRoot: string,
  ref: string,
  onProgress: (message: string) => void,
): Promise<BaseBuild> {
  let commit: string;
  try {
    commit = await git(repoRoot, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--base ${ref}: no such commit in ${repoRoot}`);
  }
  const label = await git(repoRoot, ['rev-parse', '--short', commit]);
  const root = join(BASE_BUILDS_DIR, commit);
  if (existsSync(join(root, READY_FILE))) {
    onProgress(`base ${label}: reusing its build in ${root}`);
    return { commit, label, root };
  }
  const building = `${root}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const logFile = join(building, 'bench-base-build.log');
  try {
    onProgress(`base ${label}: checking it out into ${building}…`);
    const archive = `${building}.tar`;
    await git(repoRoot, ['archive', '--format=tar', '-o', archive, commit]);
    await run('tar', ['-xf', archive, '-C', building], building, logFile);
    rmSync(archive);
    const pnpm = packageManagerOf(building);
    onProgress(`base ${label}: npx ${pnpm} install --frozen-lockfile…`);
    await run('npx', ['-y', pnpm, 'install', '--frozen-lockfile'], building, logFile);
    onProgress(`base ${label}: building ${BUILD_FILTER}…`);
    await run('npx', ['-y', pnpm, 'exec', 'turbo', 'run', 'build', `--filter=${BUILD_FILTER}`], building, logFile);
    for (const needed of [SERVER_SCRIPT, BASE_SEED_MODULE]) {
      if (!existsSync(join(building, needed))) {
        throw new Error(`base ${label} has no ${needed} after its build: the bench cannot compare with it`);
      }
    }
    writeFileSync(join(building, READY_FILE), `${commit}\n`);
    if (existsSync(join(root, READY_FILE))) {
      rmSync(building, { recursive: true, force: true });
    } else {
      rmSync(root, { recursive: true, force: true });
      renameSync(building, root);
    }
  } catch (error) {
    rmSync(`${building}.tar`, { force: true });
    throw error;
  }
  onProgress(`base ${label}: built in ${root}`);
  return { commit, label, root };
}
