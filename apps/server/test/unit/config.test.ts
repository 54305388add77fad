import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_SQLITE_PATH, SQLITE_MEMORY } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** Runs loadConfig and returns the ConfigError it throws; fails the test if it throws nothing or something else. */
function configErrorOf(env: NodeJS.ProcessEnv): ConfigError {
  let thrown: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `loadConfig(${JSON.stringify(env)}) should throw`).toBeInstanceOf(ConfigError);
  return thrown as ConfigError;
}

const DEFAULT_DATABASE_PATH = resolve(process.env.INIT_CWD ?? process.cwd(), DEFAULT_SQLITE_PATH);

describe('loadConfig', () => {
  it('uses the defaults when nothing is set', () => {
    const config = loadConfig({});

    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', logLevel: 'info' });
    expect(config.database.kind).toBe('sqlite');
    const path = config.database.kind === 'sqlite' ? config.database.path : '';
    expect(isAbsolute(path)).toBe(true);
    expect(path).toBe(DEFAULT_DATABASE_PATH);
    expect(config.shutdownGraceMs).toBeGreaterThan(0);
  });

  it('counts empty strings as unset', () => {
    expect(
      loadConfig({
        PORT: '',
        HOST: '',
        DATABASE_URL: '',
        LOG_LEVEL: '',
        SHUTDOWN_GRACE_MS: '',
        DATABASE_POOL_SIZE: '',
      }),
    ).toEqual(loadConfig({}));
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9090',
      HOST: '0.0.0.0',
      DATABASE_URL: 'file:/tmp/apikeys-config-test/db.sqlite',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '250',
    });

    expect(config).toMatchObject({
      port: 9090,
      host: '0.0.0.0',
      database: { kind: 'sqlite', path: '/tmp/apikeys-config-test/db.sqlite' },
      logLevel: 'warn',
      shutdownGraceMs: 250,
    });
  });

  it.each([
    ['PORT=0 (any free port)', { PORT: '0' }, { port: 0 }],
    ['PORT=65535', { PORT: '65535' }, { port: 65535 }],
    [
      'DATABASE_URL=file::memory:',
      { DATABASE_URL: `file:${SQLITE_MEMORY}` },
      { database: { kind: 'sqlite', path: SQLITE_MEMORY } },
    ],
    [
      'DATABASE_URL=postgres://...',
      { DATABASE_URL: 'postgres://u@h/db' },
      { database: { kind: 'postgres', url: 'postgres://u@h/db' } },
    ],
    ['LOG_LEVEL=silent', { LOG_LEVEL: 'silent' }, { logLevel: 'silent' }],
    [
      'the verification cache by default',
      {},
      { keyCache: { maxEntries: 50_000, ttlMs: 60_000, negativeTtlMs: 5_000 } },
    ],
    [
      'the verification cache settings',
      { VERIFY_CACHE_MAX_KEYS: '1000', VERIFY_CACHE_TTL_SECONDS: '30', VERIFY_CACHE_NOT_FOUND_TTL_SECONDS: '2' },
      { keyCache: { maxEntries: 1000, ttlMs: 30_000, negativeTtlMs: 2_000 } },
    ],
    ['VERIFY_CACHE_MAX_KEYS=0 (no cache)', { VERIFY_CACHE_MAX_KEYS: '0' }, { keyCache: { maxEntries: 0 } }],
  ])('accepts %s', (_label, env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '80abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'sqlite:./db.sqlite'],
    ['DATABASE_URL', './db.sqlite'],
    ['DATABASE_URL', 'file:'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_LEVEL', 'verbose'],
    ['SHUTDOWN_GRACE_MS', 'soon'],
    ['SHUTDOWN_GRACE_MS', '-5'],
    ['DATABASE_POOL_SIZE', '0'],
    ['DATABASE_POOL_SIZE', 'many'],
    ['VERIFY_CACHE_MAX_KEYS', '-1'],
    ['VERIFY_CACHE_TTL_SECONDS', '0'],
    ['VERIFY_CACHE_NOT_FOUND_TTL_SECONDS', '1h'],
  ])('rejects %s=%s with a ConfigError naming the variable', (variable, value) => {
    const error = configErrorOf({ [variable]: value });

    expect(error.message).toContain(variable);
    expect(error.message).not.toContain('\n');
  });

  it('names every bad variable at once', () => {
    const error = configErrorOf({ PORT: 'abc', LOG_LEVEL: 'loud' });

    expect(error.message).toContain('PORT');
    expect(error.message).toContain('LOG_LEVEL');
  });

  it('never prints a database password in its message', () => {
    const error = configErrorOf({ DATABASE_URL: 'mysql://admin:hunter2@db.internal/keys' });

    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).not.toContain('hunter2');
  });

  describe('TRUST_PROXY', () => {
    it("trusts no proxy when unset or blank: the client is the connection's peer", () => {
      expect(loadConfig({}).trustProxy).toBe(0);
      expect(loadConfig({ TRUST_PROXY: ' ' }).trustProxy).toBe(0);
    });

    it.each([
      ['0', 0],
      ['1', 1],
      [' 2 ', 2],
      ['100', 100],
    ])('reads %j as a hop count', (value, hops) => {
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(hops);
    });

    it.each([
      ['10.0.0.5', ['10.0.0.5']],
      ['10.0.0.5, 10.0.0.6', ['10.0.0.5', '10.0.0.6']],
      ['10.0.0.0/8,192.168.1.0/255.255.255.0', ['10.0.0.0/8', '192.168.1.0/255.255.255.0']],
      ['loopback, linklocal, uniquelocal', ['loopback', 'linklocal', 'uniquelocal']],
      ['::1, fd00::/8, ::ffff:10.0.0.5', ['::1', 'fd00::/8', '::ffff:10.0.0.5']],
    ])('reads %j as a list of addresses and subnets', (value, list) => {
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(list);
    });

    it.each([
      ['101', '101 hops is more than 100'],
      ['-1', '"-1" is not an IP address'],
      ['1.5', '"1.5" is not an IP address'],
      ['10.0.0.999', '"10.0.0.999" is not an IP address'],
      ['10.0.0.5, haproxy.internal', '"haproxy.internal" is not an IP address'],
      ['10.0.0.0/33', '"10.0.0.0/33" is not an IP address, a subnet'],
      ['10.0.0.0/0', '"10.0.0.0/0" is not an IP address, a subnet'],
      ['10.0.0.5,,10.0.0.6', 'the list has an empty entry'],
      ['10.0.0.5,', 'the list has an empty entry'],
      ['true', '"true" would trust every client to name its own address'],
      ['false', '"false" is not an IP address'],
    ])('refuses %j with a message naming the variable and what is wrong', (value, reason) => {
      const error = configErrorOf({ TRUST_PROXY: value });

      expect(error.message).toContain('TRUST_PROXY must be a number of proxy hops from 0 to 100, or a comma-separated');
      expect(error.message).toContain(reason);
      expect(error.message).toContain(`(got ${JSON.stringify(value)})`);
      expect(error.message).not.toContain('\n');
    });
  });

  it.each([' ', '  \t'])('does not read a blank PORT (%j) as port 0: it is unset or rejected', (value) => {
    let port: number | undefined;
    try {
      port = loadConfig({ PORT: value }).port;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return;
    }
    // Number('  ') is 0, which would silently bind a random port instead of 8080.
    expect(port).toBe(8080);
  });
});
