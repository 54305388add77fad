import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDatabase } from './run-cli.js';

describe.concurrent('apikeys with an unusable DATABASE_URL', () => {
  const db = tempDatabase();
  afterAll(() => db.remove());

  it('mysql:// exits 2 and names the accepted schemes', async () => {
    const result = await runCli(['orgs', 'list'], { DATABASE_URL: 'mysql://x' });

    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/DATABASE_URL must start with file: \(SQLite\) or postgres:\/\/ .*"mysql:\/\/x"/);
  });

  it('postgres:// of an unreachable server exits 1 naming the server, without its password, and the reason', async () => {
    const result = await runCli(['orgs', 'list'], { DATABASE_URL: 'postgres://ops:s3cret@127.0.0.1:1/apikeys' });

    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(
      /^apikeys: error: cannot open the database postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/apikeys \(DATABASE_URL\): .*ECONNREFUSED/,
    );
    expect(result.stderr).not.toContain('s3cret');
  });

  it('a file: path that cannot be created exits 1 naming the file and the reason', async () => {
    const notADirectory = join(db.dir, 'plain-file');
    writeFileSync(notADirectory, '');
    const path = join(notADirectory, 'db.sqlite');

    const result = await runCli(['migrate'], { DATABASE_URL: `file:${path}` });

    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(`apikeys: error: cannot open the database ${path} (DATABASE_URL): `);
    expect(result.stderr).toMatch(/ENOTDIR|EEXIST/);
  });
});
