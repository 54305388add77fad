import { isAbsolute, join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DatabaseUrlError, openStore, parseDatabaseUrl, redactUrl } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { SQLITE_MEMORY } from '../src/sqlite/open-sqlite-store.js';

describe('parseDatabaseUrl', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([undefined, '', '   '])('%j means the default SQLite file, as an absolute path', (url) => {
    const location = parseDatabaseUrl(url);

    expect(location.kind).toBe('sqlite');
    const path = location.kind === 'sqlite' ? location.path : '';
    expect(isAbsolute(path)).toBe(true);
    expect(path.endsWith(join('data', 'api-keys.sqlite'))).toBe(true);
  });

  it('resolves relative paths against the directory the command was run from (INIT_CWD)', () => {
    vi.stubEnv('INIT_CWD', '/srv/apikeys');

    expect(parseDatabaseUrl(undefined)).toEqual({ kind: 'sqlite', path: '/srv/apikeys/data/api-keys.sqlite' });
    expect(parseDatabaseUrl('file:./db/x.sqlite')).toEqual({ kind: 'sqlite', path: '/srv/apikeys/db/x.sqlite' });
  });

  it('without INIT_CWD resolves relative paths against the working directory', () => {
    vi.stubEnv('INIT_CWD', undefined);

    expect(parseDatabaseUrl('file:rel.sqlite')).toEqual({ kind: 'sqlite', path: resolve(process.cwd(), 'rel.sqlite') });
  });

  it('file:/tmp/x.sqlite is that SQLite file', () => {
    expect(parseDatabaseUrl('file:/tmp/x.sqlite')).toEqual({ kind: 'sqlite', path: '/tmp/x.sqlite' });
  });

  it('file::memory: is an in-memory SQLite database', () => {
    expect(parseDatabaseUrl('file::memory:')).toEqual({ kind: 'sqlite', path: SQLITE_MEMORY });
  });

  it.each(['postgres://app:pw@db.internal:5432/apikeys', 'postgresql://localhost/apikeys'])(
    '%s is a PostgreSQL server',
    (url) => {
      expect(parseDatabaseUrl(url)).toEqual({ kind: 'postgres', url });
    },
  );

  it.each(['file:', 'mysql://root:hunter2@db/apikeys', 'api-keys.sqlite', 'http://example.com', 'sqlite:x.db'])(
    '%j is a DatabaseUrlError',
    (url) => {
      expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError);
    },
  );

  it('the error for an unusable URL does not show its password', () => {
    let message = '';
    try {
      parseDatabaseUrl('mysql://root:hunter2@db/apikeys');
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }

    expect(message).toContain('mysql://root:***@db/apikeys');
    expect(message).not.toContain('hunter2');
  });
});

describe('openStore', () => {
  it('opens an in-memory SQLite store that migrates', async () => {
    const { store, migrator } = await openStore({ kind: 'sqlite', path: SQLITE_MEMORY });
    try {
      expect(await migrator.migrateToLatest()).toContain('0001-initial');
      expect(await store.getOrganization(DEFAULT_ORGANIZATION.id)).toBeDefined();
    } finally {
      await store.close();
    }
  });
});

describe('redactUrl', () => {
  it.each([
    ['postgres://app:s3cret@db.internal:5432/apikeys', 'postgres://app:***@db.internal:5432/apikeys'],
    [
      'postgresql://app:p%40ss%2Fword@localhost/apikeys?sslmode=require',
      'postgresql://app:***@localhost/apikeys?sslmode=require',
    ],
    ['postgres://app:with:colon@host/db', 'postgres://app:***@host/db'],
    ['postgres://app:@host/db', 'postgres://app:***@host/db'],
    ['postgres://:only-a-password@host/db', 'postgres://:***@host/db'],
    ['postgres://app:raw@at@host/db', 'postgres://app:***@host/db'],
  ])('hides the password of %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each(['postgres://app@host/db', 'postgres://host:5432/db', 'file:./data/api-keys.sqlite'])(
    'leaves %s, which has no password, unchanged',
    (url) => {
      expect(redactUrl(url)).toBe(url);
    },
  );
});
