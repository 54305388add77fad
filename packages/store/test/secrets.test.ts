import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { randomBase62 } from '../src/random.js';
import {
  checksumOf,
  hashesEqual,
  hashSecret,
  hintFor,
  issueSecret,
  SECRET_PREFIX,
  secretForm,
} from '../src/secrets.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

describe('randomBase62', () => {
  it.each([0, 1, 4, 43, 200])('returns exactly %i characters of [A-Za-z0-9]', (length) => {
    const value = randomBase62(length);

    expect(value).toHaveLength(length);
    expect(value).toMatch(/^[A-Za-z0-9]*$/);
  });

  it('never repeats a 24-character value over many samples', () => {
    const samples = Array.from({ length: 20_000 }, () => randomBase62(24));

    expect(new Set(samples).size).toBe(samples.length);
  });

  it('uses all 62 characters about equally often (no modulo bias)', () => {
    const perCharacter = 2000;
    const counts = new Map<string, number>();

    for (const char of randomBase62(62 * perCharacter)) {
      counts.set(char, (counts.get(char) ?? 0) + 1);
    }

    expect([...counts.keys()].sort()).toEqual([...BASE62].sort());
    // A standard deviation is about 44; byte % 62 without rejection would give 8 characters 25% more.
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(perCharacter * 0.85);
      expect(count).toBeLessThan(perCharacter * 1.15);
    }
  });
});

describe('issueSecret', () => {
  it.each([
    ['apiKey', 'sk-api-'],
    ['admin', 'sk-adm-'],
  ] as const)(
    'issues a %s secret as its prefix, 43 base62 characters and a checksum, with hash and hint',
    (kind, prefix) => {
      const issued = issueSecret(kind);

      expect(SECRET_PREFIX[kind]).toBe(prefix);
      expect(issued.secret).toMatch(new RegExp(`^${prefix}[A-Za-z0-9]{49}$`));
      expect(issued.secret.slice(-6)).toBe(checksumOf(issued.secret.slice(0, -6)));
      expect(issued.hash).toBe(createHash('sha256').update(issued.secret).digest('hex'));
      expect(issued.hint).toBe(`${prefix}${issued.secret.slice(7, 11)}...${issued.secret.slice(-4)}`);
    },
  );

  it('never issues the same secret twice over many samples', () => {
    const secrets = Array.from({ length: 10_000 }, () => issueSecret('apiKey').secret);

    expect(new Set(secrets).size).toBe(secrets.length);
  });
});

describe('secretForm', () => {
  it('recognises an issued secret by its checksum, and a secret of the earlier form without one', () => {
    expect(secretForm(issueSecret('apiKey').secret)).toBe('checksummed');
    expect(secretForm(issueSecret('admin').secret)).toBe('checksummed');
    expect(secretForm(`sk-adm-${randomBase62(43)}`)).toBe('legacy');
    expect(secretForm(`sk-api-${randomBase62(43)}`)).toBe('legacy');
  });

  it('finds every single mistyped character of the random part and the checksum', () => {
    const { secret } = issueSecret('admin');

    for (let index = 'sk-adm-'.length; index < secret.length; index++) {
      const original = secret[index] as string;
      const typo = BASE62[(BASE62.indexOf(original) + 1) % 62] as string;
      const mistyped = secret.slice(0, index) + typo + secret.slice(index + 1);

      expect(secretForm(mistyped), `a typo at ${index}`).toBe('mistyped');
    }
  });

  it('finds two neighbouring characters swapped', () => {
    const { secret } = issueSecret('apiKey');
    // The first two different neighbours of the random part: swapping equal ones would change nothing.
    let at = 'sk-api-'.length;
    while (secret[at] === secret[at + 1]) {
      at += 1;
    }
    const swapped = secret.slice(0, at) + secret[at + 1] + secret[at] + secret.slice(at + 2);

    expect(secretForm(swapped)).toBe('mistyped');
  });

  it.each([
    ['another prefix', `sk-xyz-${'A'.repeat(49)}`],
    ['no prefix', randomBase62(56)],
    ['too short', `sk-adm-${'A'.repeat(42)}`],
    ['between the two forms', `sk-adm-${'A'.repeat(46)}`],
    ['too long', `sk-adm-${'A'.repeat(50)}`],
    ['a character outside base62', `sk-adm-${'A'.repeat(42)}_`],
    ['surrounding space', ` sk-adm-${'A'.repeat(43)}`],
  ])('calls a secret with %s foreign', (_name, secret) => {
    expect(secretForm(secret)).toBe('foreign');
  });

  it('is a pure function of the text: the same checksum in every process', () => {
    expect(checksumOf(`sk-api-${'A'.repeat(43)}`)).toBe(checksumOf(`sk-api-${'A'.repeat(43)}`));
    expect(checksumOf(`sk-api-${'A'.repeat(43)}`)).toMatch(/^[A-Za-z0-9]{6}$/);
    expect(checksumOf(`sk-api-${'A'.repeat(43)}`)).not.toBe(checksumOf(`sk-adm-${'A'.repeat(43)}`));
  });
});

describe('hashSecret', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 secret', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('sk-api-abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret('sk-api-abc')).not.toBe(hashSecret('sk-api-abd'));
  });
});

describe('hintFor', () => {
  it('shows the prefix, the first 4 random characters, ... and the last 4 characters', () => {
    const secret = `sk-api-ABCD${'x'.repeat(35)}WXYZ`;

    expect(hintFor(secret, 'apiKey')).toBe('sk-api-ABCD...WXYZ');
    expect(hintFor(`sk-adm-abcd${'y'.repeat(35)}6789`, 'admin')).toBe('sk-adm-abcd...6789');
  });
});

describe('hashesEqual', () => {
  it('is true for equal hashes and false for any difference', () => {
    const hash = hashSecret('sk-api-one');

    expect(hashesEqual(hash, hash)).toBe(true);
    expect(hashesEqual(hash, hashSecret('sk-api-one'))).toBe(true);
    expect(hashesEqual(hash, hashSecret('sk-api-two'))).toBe(false);
    expect(hashesEqual(hash, `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(hashesEqual(hash, hash.slice(0, -2))).toBe(false);
    expect(hashesEqual(hash, '')).toBe(false);
  });

  it('does not treat text that is not hex as equal (hex decoding would drop it)', () => {
    expect(hashesEqual('abc', 'abd')).toBe(false);
    expect(hashesEqual('zz', 'yy')).toBe(false);
    expect(hashesEqual('ABCD', 'abcd')).toBe(false);
  });
});
