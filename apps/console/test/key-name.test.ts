import { API_KEY_NAME_LENGTH } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import { nameProblem } from '../src/key-name.js';

describe("a key name, checked against the spec's rule before it is sent", () => {
  it('accepts names from the shortest to the longest length, in code points', () => {
    expect(nameProblem('a')).toBeNull();
    expect(nameProblem('x'.repeat(API_KEY_NAME_LENGTH.maximum))).toBeNull();
    // 500 emoji are 1000 UTF-16 units but 500 code points, as the API counts them.
    expect(nameProblem('🔑'.repeat(API_KEY_NAME_LENGTH.maximum))).toBeNull();
  });

  it('refuses an empty name, a name over the maximum and a NUL character', () => {
    expect(nameProblem('')).toBe('Enter a name.');
    expect(nameProblem('x'.repeat(API_KEY_NAME_LENGTH.maximum + 1))).toBe(
      `A name has at most ${API_KEY_NAME_LENGTH.maximum} characters; this one has ${API_KEY_NAME_LENGTH.maximum + 1}.`,
    );
    expect(nameProblem('a\u0000b')).toBe('A name cannot contain a NUL character.');
  });
});
