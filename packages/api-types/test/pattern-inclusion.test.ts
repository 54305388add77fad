import { patternAcceptsAll } from '@apikeys/spec/pattern-inclusion';
import { describe, expect, it } from 'vitest';

// A JSON Schema pattern matches anywhere in a string (`new RegExp(pattern, 'u').test(string)`), unless anchored.
describe('patternAcceptsAll(wider, narrower): every string the narrower pattern accepts, the wider accepts too', () => {
  it.each([
    ['the same pattern', '^[a-z]+$', '^[a-z]+$'],
    ['a wider character class', '^[A-Za-z]+$', '^[a-z]+$'],
    ['more repetitions', '^\\d{1,9}$', '^\\d{1,6}$'],
    ['an unanchored pattern, which matches anywhere', 'b', '^abc$'],
    ['an end anchor only: any prefix', '\\.json$', '^[a-z]+\\.json$'],
    ['anchors in each alternative', '^[ab]$', '^a$|^b$'],
    ['astral characters, read as code points', '^[^\\u0000]*$', '^[\\u{1F600}-\\u{1F64F}]*$'],
  ])('holds for %s', (_, wider, narrower) => {
    expect(patternAcceptsAll(wider, narrower)).toBe(true);
  });

  it.each([
    ['a narrower character class', '^[a-z]+$', '^[A-Za-z]+$'],
    ['fewer repetitions', '^\\d{1,6}$', '^\\d{1,9}$'],
    ['an anchored pattern, where the other matches anywhere', '^abc$', 'b'],
    ['an anchor on one side of an alternation only (^a|b$ is not ^(?:a|b)$)', '^(?:a|b)$', '^a|b$'],
    ['a NUL character the wider one refuses', '^[^\\u0000]*$', '^[\\u0000-\\u0001]*$'],
    ['a lookahead, which no automaton here decides', '^(?!x)[a-z]*$', '^[a-y]*$'],
    ['a word boundary', '\\bword\\b', '^word$'],
    ['an invalid pattern', '^[a-z$', '^a$'],
  ])('fails for %s', (_, wider, narrower) => {
    expect(patternAcceptsAll(wider, narrower)).toBe(false);
  });
});
