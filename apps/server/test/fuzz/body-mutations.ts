/**
 * Hostile bodies, derived from each operation's body schema: invalid values, malformed JSON, bytes that are not
 * UTF-8, sizes around the limit, deep nesting, media types, encodings and framings; and bodies sent to operations
 * that take none.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  type ArbitraryContext,
  addHeader,
  bytesBody,
  type Mutation,
  mutation,
  removeHeader,
  setHeader,
  textBody,
} from './drafts.js';
import { CONTENT_ENCODINGS, CONTENT_TYPES } from './hostile.js';
import { type BodyPart, type Framing, MALFORMED_CHUNKS, type MalformedChunk } from './request.js';
import { Entries, invalidValue, jsonText, validValue } from './schema-values.js';
import type { OperationModel } from './spec-model.js';

const MALFORMED_JSON = [
  '{',
  '}',
  '[',
  '"',
  '{"name": "half',
  "{'name': 'x'}",
  '{"name": "x",}',
  '{"name": "x"} x',
  '{"name": "x"}{}',
  '{"name": NaN}',
  '{"name": undefined}',
  '{/* comment */}',
  '{"name": "a\\x41"}',
  '{"name": "\\u12"}',
  '{"name": "tab\tinside"}',
  '{"name": "\u0001"}',
  '{"a": 1}}',
  '\u0000{}',
  '{}\u0000',
  '{name: "x"}',
  '{"name" "x"}',
  '{"name": 01}',
  '{"name": .5}',
  '{"name": +1}',
  '{"name": 0x10}',
  '{"name": Infinity}',
  '{"name": "x"',
] as const;

/** Bytes that are not UTF-8, inside an otherwise valid body. */
const NOT_UTF8 = [
  'caf\xe9',
  '\xc0\xaf',
  '\xed\xa0\x80',
  '\xe2\x82',
  '\xff\xfe',
  '\xf4\x90\x80\x80',
  '\xf8\x88\x80\x80\x80',
  '\x80',
] as const;

/** Bodies nested `depth` deep, as repeated parts: arrays or objects, under a declared field or an unknown one. */
function nestedBody(field: string, depth: number, shape: 'array' | 'object' | 'top'): BodyPart[] {
  if (shape === 'top') {
    return [
      { text: '[', encoding: 'utf8', repeat: depth },
      { text: ']', encoding: 'utf8', repeat: depth },
    ];
  }
  const [open, close] = shape === 'array' ? ['[', ']'] : ['{"a":', '}'];
  return [
    { text: `{${JSON.stringify(field)}:`, encoding: 'utf8' },
    { text: open, encoding: 'utf8', repeat: depth },
    { text: shape === 'array' ? '' : '1', encoding: 'utf8' },
    { text: close, encoding: 'utf8', repeat: depth },
    { text: '}', encoding: 'utf8' },
  ];
}

/** Hostile bodies, media types, encodings and framings for an operation that takes a JSON body. */
export function bodyMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const declared = operation.body;
  if (!declared) {
    throw new Error(`${operation.operationId} takes no body`);
  }
  const { pools } = context;
  const limit = context.model.maxBodyBytes;
  const fields = Object.keys(declared.schema.properties ?? {});
  const field = fc.constantFrom(...fields, 'unknown_field');
  const stringField =
    Object.entries(declared.schema.properties ?? {}).find(([, schema]) => schema.type === 'string')?.[0] ?? 'x';
  const setBody = (label: string, modelled: boolean, body: BodyPart[] | undefined) =>
    mutation(label, modelled, (d) => {
      const { body: _old, ...rest } = d;
      return body === undefined ? rest : { ...rest, body };
    });
  const valid = validValue(declared.schema, pools);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: invalidValue(declared.schema, pools).map((value) =>
        setBody('body: invalid value', true, textBody(jsonText(value))),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...MALFORMED_JSON)
        .map((text) => setBody(`body: malformed ${JSON.stringify(text)}`, true, textBody(text))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, field, fc.oneof(invalidValue(declared.schema.properties?.[fields[0] ?? ''] ?? {}, pools), valid))
        .map(([value, name, other]) => {
          const entries = value instanceof Entries ? value.entries : [];
          return setBody(
            'body: duplicate key',
            true,
            textBody(jsonText(new Entries([...entries, [name, other], ...entries]))),
          );
        }),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          field,
          fc.constantFrom(16, 256, 2048, 4096, 8192, 65_536, 400_000),
          fc.constantFrom<'array' | 'object' | 'top'>('array', 'object', 'top'),
        )
        .map(([name, depth, shape]) =>
          setBody(`body: nested ${depth} deep (${shape})`, true, nestedBody(name, depth, shape)),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(-1, 0, 1, limit + 7), fc.constantFrom('name', 'padding', 'unknown'))
        .map(([offset, where]) => {
          // Sizes around the limit: limit - 1, limit, limit + 1 bytes, and twice the limit.
          const size = offset === limit + 7 ? 2 * limit + 7 : limit + offset;
          if (where === 'padding') {
            const json = `{${JSON.stringify(stringField)}:"padded"}`;
            return setBody(`body: ${size} bytes (whitespace)`, true, [
              { text: json, encoding: 'utf8' },
              { text: ' ', encoding: 'utf8', repeat: size - json.length },
            ]);
          }
          const key = where === 'name' ? stringField : 'unknown';
          const head = `{${JSON.stringify(key)}:"`;
          return setBody(`body: ${size} bytes (${where})`, true, [
            { text: head, encoding: 'utf8' },
            { text: 'x', encoding: 'utf8', repeat: size - head.length - 2 },
            { text: '"}', encoding: 'utf8' },
          ]);
        }),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...NOT_UTF8).map((bytes) =>
        setBody(`body: not UTF-8 ${JSON.stringify(bytes)}`, true, [
          { text: `{${JSON.stringify(stringField)}:"`, encoding: 'utf8' },
          { text: bytes, encoding: 'bytes' },
          { text: '"}', encoding: 'utf8' },
        ]),
      ),
    },
    {
      weight: 1,
      arbitrary: valid.map((value) =>
        setBody(
          'body: UTF-16LE with BOM',
          true,
          bytesBody(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(jsonText(value), 'utf16le')])),
        ),
      ),
    },
    {
      weight: 1,
      arbitrary: valid.map((value) => setBody('body: UTF-8 BOM', true, textBody(`\ufeff${jsonText(value)}`))),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('', ' ', '\r\n', '\t')
        .map((text) => setBody(`body: ${JSON.stringify(text)}`, true, text === '' ? undefined : textBody(text))),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('\\ud800', '\\udfff', '\\ud83d\\ude00', '\\udc00\\ud800', '\\ud800\\u0041')
        .chain((sequence) =>
          fc.constantFrom(
            setBody(
              `body: escape ${sequence} in a value`,
              true,
              textBody(`{${JSON.stringify(stringField)}:"a${sequence}"}`),
            ),
            setBody(`body: escape ${sequence} in a key`, true, textBody(`{"${sequence}":"x"}`)),
          ),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...CONTENT_TYPES)
        .map((type) =>
          mutation(`content-type: ${JSON.stringify(type)}`, true, (d) => setHeader(d, 'content-type', type)),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(mutation('content-type: missing', true, (d) => removeHeader(d, 'content-type'))),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        mutation('no body and no content-type', true, (d) => {
          const { body: _old, ...rest } = removeHeader(d, 'content-type');
          return rest;
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('text/plain', 'application/json')
        .map((type) =>
          mutation(`content-type: twice, then ${type}`, false, (d) => addHeader(d, ['content-type', type])),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...CONTENT_ENCODINGS)
        .map((encoding) =>
          mutation(`content-encoding: ${JSON.stringify(encoding)}`, true, (d) =>
            setHeader(d, 'content-encoding', encoding),
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.boolean()).map(([value, labelled]) =>
        mutation(`body: gzip-compressed${labelled ? ', content-encoding: gzip' : ', unlabelled'}`, true, (d) => {
          const compressed = { ...d, body: bytesBody(gzipSync(Buffer.from(jsonText(value), 'utf8'))) };
          return labelled ? setHeader(compressed, 'content-encoding', 'gzip') : compressed;
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<Framing>(
          { kind: 'chunked', size: 1 },
          { kind: 'chunked', size: 7 },
          { kind: 'chunked', size: 4096 },
          { kind: 'lying-length', delta: -1 },
          { kind: 'lying-length', delta: -5 },
          { kind: 'none' },
        )
        .map((framing) => mutation(`framing: ${JSON.stringify(framing)}`, true, (d) => ({ ...d, framing }))),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        mutation('framing: content-length and chunked', false, (d) => ({ ...d, framing: { kind: 'both' } })),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...(Object.keys(MALFORMED_CHUNKS) as MalformedChunk[])).map((form) =>
        mutation(`framing: a malformed chunk, ${form}`, true, (d) => ({
          ...d,
          framing: { kind: 'malformed-chunk', form },
        })),
      ),
    },
  );
}

/** Bodies sent to operations that take none (GET with a body): the server must ignore them. */
export function unexpectedBodyMutations(context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const anyBody = fc.oneof(
    fc.constantFrom('{"name":"from a GET"}', '{', 'null', '[]', '{"status":"archived"}'),
    fc.constant('x'.repeat(context.model.maxBodyBytes + 10)),
  );
  return fc
    .tuple(anyBody, fc.constantFrom<string | undefined>('application/json', 'text/plain', undefined), fc.boolean())
    .map(([text, type, gzip]) =>
      mutation(`body with ${text.length} bytes on an operation that takes none`, true, (d) => {
        const withBody = { ...d, body: textBody(text) };
        const typed = type === undefined ? withBody : setHeader(withBody, 'content-type', type);
        return gzip ? setHeader(typed, 'content-encoding', 'gzip') : typed;
      }),
    );
}
