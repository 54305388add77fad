import { type ChildProcess, spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The store package's folder, where the holder's script finds better-sqlite3. */
const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** A write the holder makes inside its transaction: SQL and its parameters. */
export interface HeldWrite {
  sql: string;
  parameters: readonly (string | number)[];
}

/**
 * Another process holding SQLite's write lock on a database file (`BEGIN IMMEDIATE`, and `write` inside the
 * transaction, if given) until `release()`, which commits the transaction. As the operator CLI or a backup would.
 */
export class SqliteLockHolder {
  #output = '';

  private constructor(private readonly child: ChildProcess) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        this.#output += chunk;
      });
    }
  }

  /** Starts the holder and resolves once it holds the lock. */
  static async take(path: string, write?: HeldWrite): Promise<SqliteLockHolder> {
    const script = `
      const Database = require('better-sqlite3');
      const [path, write] = process.argv.slice(1);
      const database = new Database(path);
      database.pragma('busy_timeout = 5000');
      database.exec('BEGIN IMMEDIATE');
      if (write) {
        const { sql, parameters } = JSON.parse(write);
        database.prepare(sql).run(...parameters);
      }
      process.stdout.write('locked\\n');
      process.stdin.once('data', () => {
        database.exec('COMMIT');
        database.close();
        process.stdout.write('released\\n');
        process.exit(0);
      });`;
    const holder = new SqliteLockHolder(
      spawn(process.execPath, ['-e', script, path, ...(write ? [JSON.stringify(write)] : [])], {
        cwd: PACKAGE_DIR,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    await holder.#waitFor('locked');
    return holder;
  }

  async #waitFor(word: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!this.#output.includes(word)) {
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the lock holder did not say "${word}": ${this.#output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Commits the holder's transaction and waits for it to say so. */
  async release(): Promise<void> {
    this.child.stdin?.end('release\n');
    await this.#waitFor('released');
  }

  /** Ends the holder at once, if it still runs (its transaction rolls back). */
  kill(): void {
    if (this.child.exitCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}
