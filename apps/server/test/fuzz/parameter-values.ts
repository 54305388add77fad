/**
 * Text for query, path and header parameters, derived from their schemas: what a client sends for a valid value,
 * the hostile forms of each type, and whether a text is valid, taken exactly as the contract writes it.
 */
import fc from 'fast-check';
import {
  conforms,
  invalidStrings,
  jsonText,
  LONE_SURROGATE,
  memoized,
  type ValuePools,
  validInteger,
  validValue,
  WRONG_TYPES,
} from './schema-values.js';
import { type JsonSchema, typesOf } from './spec-model.js';

/** Whether a parameter's text (decoded) is valid for its schema, taken exactly as the contract writes it. */
export function parameterTextConforms(schema: JsonSchema, text: string): boolean {
  if (LONE_SURROGATE.test(text)) {
    return false;
  }
  return typesOf(schema).some((type) => {
    switch (type) {
      case 'integer':
        // Plain decimal digits, no sign or leading zero: the only integer form the contract accepts.
        return /^(?:0|[1-9][0-9]*)$/.test(text) && Number.isSafeInteger(Number(text)) && conforms(schema, Number(text));
      case 'number':
        return /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/.test(text) && conforms(schema, Number(text));
      case 'boolean':
        return (text === 'true' || text === 'false') && conforms(schema, text === 'true');
      case 'null':
        return false;
      case 'string':
        return conforms(schema, text);
      default:
        return false;
    }
  });
}

/** Forms of a whole number that the contract refuses, though a lenient parser reads them as `value`. */
export function lenientIntegerForms(value: number): string[] {
  const text = String(value);
  return [
    `+${text}`,
    `0${text}`,
    `00${text}`,
    `${text}.0`,
    `${text}.`,
    `${text}e0`,
    `${value / 10}e1`,
    `${text}E0`,
    `0x${value.toString(16)}`,
    `0X${value.toString(16).toUpperCase()}`,
    `0o${value.toString(8)}`,
    `0b${value.toString(2)}`,
    ` ${text}`,
    `${text} `,
    `\t${text}`,
    `${text}\n`,
    `${text}\u0000`,
    `${text}_0`,
    `${text.slice(0, 1)},${text.slice(1) || '0'}`,
    `[${text}]`,
    `${text}\u200b`,
    [...text].map((digit) => String.fromCodePoint(0xff10 + Number(digit))).join(''),
    [...text].map((digit) => String.fromCodePoint(0x0660 + Number(digit))).join(''),
    `-${text}`,
    `-0`,
    '',
  ];
}

/** Integer texts out of the schema's range or beyond exact doubles: `max + 1`, 2^53 + 1, 400 nines, infinities. */
export function outOfRangeIntegerForms(schema: JsonSchema): string[] {
  return [
    ...(schema.minimum === undefined ? [] : [String(schema.minimum - 1)]),
    ...(schema.maximum === undefined ? [] : [String(schema.maximum + 1), String(schema.maximum * 1000)]),
    '9007199254740992',
    '9007199254740993',
    '18446744073709551616',
    '9'.repeat(400),
    '1e400',
    'Infinity',
    '-Infinity',
    'NaN',
    'null',
    'true',
    'undefined',
  ];
}

/** Valid text for a parameter: what a client sends for a valid value. */
export const validParameterText = memoized(buildValidParameterText);

function buildValidParameterText(schema: JsonSchema, pools: ValuePools): fc.Arbitrary<string> {
  return validValue(schema, pools).map((value) => (typeof value === 'string' ? value : jsonText(value)));
}

/** Text that a parameter's schema refuses: the hostile forms of its type, out-of-range and malformed values. */
export const invalidParameterText = memoized(buildInvalidParameterText);

function buildInvalidParameterText(schema: JsonSchema, pools: ValuePools): fc.Arbitrary<string> {
  const types = typesOf(schema);
  const candidates: fc.Arbitrary<string>[] = [];
  if (types.includes('integer') || types.includes('number')) {
    candidates.push(
      validInteger(schema).chain((value) => fc.constantFrom(...lenientIntegerForms(value))),
      fc.constantFrom(...outOfRangeIntegerForms(schema)),
    );
  }
  candidates.push(
    fc.constantFrom(...invalidStrings(schema)),
    fc.constantFrom(...WRONG_TYPES.map((value) => (typeof value === 'string' ? value : jsonText(value)))),
  );
  const known = pools.strings;
  if (known.length > 0) {
    candidates.push(fc.constantFrom(...known));
  }
  return fc.oneof(...candidates).filter((text) => !parameterTextConforms(schema, text));
}

/**
 * The bytes of a text as UTF-8, except that unpaired surrogates are written as their 3-byte (WTF-8) form, which
 * is not UTF-8: the only way to send one in a URL.
 */
export function wtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const code = text.codePointAt(index) ?? 0;
    if (code > 0xffff) {
      index += 1;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
    }
  }
  return Buffer.from(bytes);
}
