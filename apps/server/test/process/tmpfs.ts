import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether the tests that mount file systems can run here: they need root. In CI they must (not being root is an
 * error there, never a reason to skip); elsewhere they are left out with a note on stderr.
 */
export function mountsAvailable(): boolean {
  if (process.getuid?.() === 0) {
    return true;
  }
  if (process.env.CI) {
    throw new Error('CI requires root to mount the tmpfs file systems of the SQLite failure tests');
  }
  process.stderr.write('not root: leaving out the SQLite failure tests that mount a tmpfs (run them as root)\n');
  return false;
}

/** Runs a command and returns nothing, or throws with its stderr. */
function run(command: string, args: string[]): void {
  try {
    execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr || String(error)}`, { cause: error });
  }
}

/** A small tmpfs mounted on a directory of its own, that a test can fill up and remount read-only. */
export interface Tmpfs {
  directory: string;
  /** Writes a filler file until the file system is full (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Deletes the filler file. */
  unfill(): void;
  /** Remounts the file system read-only or read-write (refused while a process has a file of it open to write). */
  remount(mode: 'ro' | 'rw'): void;
  /** Unmounts (lazily if it is busy) and removes the directory; safe to call twice. */
  dispose(): void;
}

/** Mounts a tmpfs of `sizeKiB` on a new temporary directory. */
export function mountTmpfs(sizeKiB: number): Tmpfs {
  const directory = mkdtempSync(join(tmpdir(), 'apikeys-tmpfs-'));
  run('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', directory]);
  const filler = join(directory, 'filler');
  let mounted = true;
  return {
    directory,
    fill() {
      const fd = openSync(filler, 'a');
      const chunks = [Buffer.alloc(64 * 1024, 1), Buffer.alloc(4096, 1), Buffer.alloc(1, 1)];
      let written = 0;
      try {
        for (const chunk of chunks) {
          for (;;) {
            try {
              written += writeSync(fd, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') {
                throw error;
              }
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    unfill() {
      rmSync(filler, { force: true });
    },
    remount(mode) {
      run('mount', ['-o', `remount,${mode}`, directory]);
    },
    dispose() {
      if (mounted) {
        try {
          run('umount', [directory]);
        } catch {
          // A process that still has a file open there (a server that did not exit) keeps it busy.
          run('umount', ['-l', directory]);
        }
        mounted = false;
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
