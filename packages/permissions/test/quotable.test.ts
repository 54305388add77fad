import { describe, expect, it } from 'vitest';
import {
  holdsSecretForm,
  type QuotableShape,
  quotable,
  quoteOr,
  SECRET_CHECKSUM_LENGTH,
  SECRET_PREFIX,
  SECRET_RANDOM_LENGTH,
} from '../src/index.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` random base62 characters, as a secret's random part and checksum are made. */
function randomBase62(length: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(length)), (byte) => BASE62[byte % 62]).join('');
}

/** A secret of each kind in each form the service has issued: with a checksum, and the legacy form without. */
const SECRETS = Object.entries(SECRET_PREFIX).flatMap(([kind, prefix]) => {
  const legacy = prefix + randomBase62(SECRET_RANDOM_LENGTH);
  return [
    { name: `${kind}, checksummed`, secret: legacy + randomBase62(SECRET_CHECKSUM_LENGTH) },
    { name: `${kind}, legacy`, secret: legacy },
  ];
});

const SHAPES: QuotableShape[] = ['id', 'name', 'date', 'word', 'character', 'key', 'file'];

describe('holdsSecretForm', () => {
  it.each(SECRETS)(
    'finds a secret ($name) alone, inside a longer word, without its prefix, in upper case',
    ({ secret }) => {
      const random = secret.slice(secret.indexOf('-', 3) + 1);

      expect(holdsSecretForm(secret)).toBe(true);
      expect(holdsSecretForm(`x${secret}.read`)).toBe(true);
      expect(holdsSecretForm(`documents.read AND ${secret}`)).toBe(true);
      expect(holdsSecretForm(`apikey_${random}`)).toBe(true);
      expect(holdsSecretForm(secret.toUpperCase())).toBe(true);
    },
  );

  it('finds a prefix cut from the rest of its secret', () => {
    expect(holdsSecretForm('sk-adm-')).toBe(true);
    expect(holdsSecretForm('SK-API-short')).toBe(true);
  });

  it.each([
    'apikey_01HZX3Q8K2M4N6P8R0T2V4W6',
    'documents.read',
    '2026-10-21',
    `documents.${'a'.repeat(200)}`,
    `${'A1'.repeat(21)}`,
    'sk-ap-i',
  ])('finds nothing of a secret in %s', (text) => {
    expect(holdsSecretForm(text)).toBe(false);
  });
});

describe('quotable', () => {
  it.each(SECRETS)(
    'refuses a secret ($name) in every shape, even where the shape alone would take it',
    ({ secret }) => {
      const random = secret.slice(secret.indexOf('-', 3) + 1);

      for (const shape of SHAPES) {
        expect(quotable(secret, shape), shape).toBe(false);
        expect(quotable(`apikey_${random}`, shape), shape).toBe(false);
      }
      expect(quoteOr(secret, 'word', 'this word')).toBe('this word');
    },
  );

  it.each<[QuotableShape, string]>([
    ['id', 'apikey_01HZX3Q8K2M4N6P8R0T2V4W6'],
    ['name', 'after_id'],
    ['date', '2026-10-21'],
    ['word', 'Docs.read'],
    ['character', '&'],
    ['key', 'customerId'],
    ['file', 'index-B2x9Qm1a.js'],
  ])('takes a value of the shape %s: %s', (shape, value) => {
    expect(quotable(value, shape)).toBe(true);
    expect(quoteOr(value, shape, 'fallback')).toBe(value);
  });

  it.each<[QuotableShape, string]>([
    ['id', 'apikey-01'],
    ['name', 'After_id'],
    ['date', '21/10/2026'],
    ['word', 'docs read'],
    ['character', 'ab'],
    ['key', 'a.b'],
    ['file', '../package.json'],
  ])('refuses a value of another shape than %s: %s', (shape, value) => {
    expect(quotable(value, shape)).toBe(false);
  });
});
