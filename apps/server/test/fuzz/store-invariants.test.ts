/**
 * The fuzzer's store and log checks can fail: a server whose store is sabotaged to change what a request may not
 * change, to write a secret to its log or to throw, is caught, with the invariant named.
 */
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { openSqliteStore, SQLITE_MEMORY, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTHING_CHANGES } from './change-checks.js';
import { createFixture, type Fixture, Fuzzer, FuzzFailure } from './fuzzer.js';
import type { FuzzRequest } from './request.js';
import { readSpecModels } from './spec-model.js';
import { get, LATEST, LIST, request } from './test-requests.js';

const models = readSpecModels();

describe('the invariants of the store and the log, on a sabotaged server', () => {
  let server: TestServer;
  let fixture: Fixture;
  let fuzzer: Fuzzer;
  let sabotage: ((store: Store, organizationId: string, id: string) => Promise<void>) | undefined;

  beforeAll(async () => {
    const { store, migrator } = openSqliteStore(SQLITE_MEMORY);
    // A store whose reads can be made to misbehave, the way a server bug would.
    const sabotaged = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'getApiKey') {
          return async (organizationId: string, id: string) => {
            // Once: the fuzzer's own reads of the store go through here too.
            const once = sabotage;
            sabotage = undefined;
            await once?.(target, organizationId, id);
            return target.getApiKey(organizationId, id);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    server = await startTestServer({ opened: { store: sabotaged as Store, migrator } });
    fixture = await createFixture(server);
    fuzzer = await Fuzzer.start(server, models, fixture);
  });
  afterAll(() => server.close());

  async function invariantBroken(sent: FuzzRequest): Promise<string | undefined> {
    try {
      await fuzzer.send(sent);
      return undefined;
    } catch (failure) {
      return failure instanceof FuzzFailure ? failure.invariant : String(failure);
    } finally {
      sabotage = undefined;
    }
  }

  const unknownKey = `${LIST}/apikey_000000000000000000000000`;

  it('keeps every invariant for a valid read and a valid write (the controls)', async () => {
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBeUndefined();
    const rename = request('POST', `${LIST}/$KEY_ID`, { version: LATEST, body: { name: 'renamed' } });
    expect(await invariantBroken(rename)).toBeUndefined();
    const rotate = request('POST', `${LIST}/$KEY_ID/rotate`, { version: LATEST, body: { grace_period_seconds: 60 } });
    expect(await invariantBroken(rotate)).toBeUndefined();
    const verify = request('POST', '/v1/keys/verify', {
      version: LATEST,
      credential: '$VERIFIER_KEY',
      body: { key: '$API_KEY_SECRET' },
    });
    expect(await invariantBroken(verify)).toBeUndefined();
  });

  it('catches a read that changes a key, and restores it', async () => {
    sabotage = async (store, organizationId) => {
      await store.updateApiKey(organizationId, fixture.bindings.$OLDER_KEY_ID, { name: 'changed by a read' });
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe(NOTHING_CHANGES);
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBeUndefined();
  });

  it('catches a refused request that changes a key', async () => {
    sabotage = async (store, organizationId) => {
      await store.updateApiKey(organizationId, fixture.bindings.$OLDER_KEY_ID, { status: 'archived' });
    };
    expect(await invariantBroken(get(unknownKey))).toBe(NOTHING_CHANGES);
  });

  it('catches a refused request that creates a key', async () => {
    sabotage = async (store, organizationId) => {
      await store.createApiKey({ organizationId, name: 'made by a refusal', createdBy: { id: 'u', type: 'user' } });
    };
    expect(await invariantBroken(get(unknownKey))).toBe(NOTHING_CHANGES);
  });

  it('catches a refused request that writes an audit event', async () => {
    sabotage = async (store, organizationId) => {
      await store.createAdminKey({ organizationId, name: 'made by a refusal' });
    };
    expect(await invariantBroken(get(unknownKey))).toBe(NOTHING_CHANGES);
  });

  it("catches a refused request that records a key's use", async () => {
    sabotage = async (store, organizationId) => {
      const use = { id: fixture.bindings.$OLDER_KEY_ID, organizationId, lastUsedAt: 60_000_000 * 29_000_000 };
      await store.recordKeyUsage([use]);
    };
    expect(await invariantBroken(get(unknownKey))).toBe(NOTHING_CHANGES);
  });

  it('catches a secret written to the log', async () => {
    sabotage = async () => {
      server.logLines.push(JSON.stringify({ msg: 'debug', key: fixture.bindings.$OTHER_ADMIN_KEY }));
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('no secret in a log line');
  });

  it('catches an exception the server does not catch', async () => {
    sabotage = async () => {
      fuzzer.uncaughtException(new RangeError('Maximum call stack size exceeded'));
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('the server never throws an uncaught exception');
  });

  it('catches a real 500 of the server', async () => {
    sabotage = async () => {
      throw new Error('the database is on fire');
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('no 5xx');
  });
});
