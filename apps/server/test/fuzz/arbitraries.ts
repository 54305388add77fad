/**
 * Request arbitraries, derived from the spec: every operation, path, parameter and body schema comes from the
 * spec model, and the hostile forms of `hostile.ts` are applied on top. A generated request is a valid request
 * of an operation plus a list of mutations, so that shrinking removes the mutations that do not matter.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  BAD_PERCENT_ENCODINGS,
  CONTENT_ENCODINGS,
  CONTENT_TYPES,
  HARMLESS_HEADERS,
  MISPLACED_SECRET_HEADERS,
  ODD_CREDENTIALS,
  ODD_METHODS,
  ODD_PERCENT_ENCODINGS,
  ODD_PROTOCOLS,
  ODD_QUERY_SYNTAX,
  ODD_SEGMENTS,
  ODD_VERSIONS,
  PROTOCOL_HEADERS,
} from './hostile.js';
import {
  type BodyPart,
  type Framing,
  type FuzzRequest,
  ID_PLACEHOLDERS,
  PLACEHOLDERS,
  SECRET_PLACEHOLDERS,
} from './request.js';
import {
  Entries,
  invalidParameterText,
  invalidValue,
  jsonText,
  UNICODE_EDGE_STRINGS,
  type ValuePools,
  validParameterText,
  validValue,
  wtf8,
} from './schema-values.js';
import type { OperationModel, ParameterModel, SpecModel } from './spec-model.js';

/** Header aliases the spec states in prose: `anthropic-version` stands for `vendor-version` when that is absent. */
export const HEADER_ALIASES: Readonly<Record<string, string>> = { 'vendor-version': 'anthropic-version' };

/** What the arbitraries need besides the spec: known values by ID prefix, from the fixture. */
export interface ArbitraryContext {
  model: SpecModel;
  /** Known values (placeholders or fixture values) by the prefix of their ID, e.g. `apikey_` → the key IDs. */
  knownByPrefix: Readonly<Record<string, readonly string[]>>;
}

/** A request under construction. */
interface Draft {
  labels: string[];
  modelled: boolean;
  method: string;
  /** Path segments after the leading `/`, as sent (percent-encoded). */
  segments: string[];
  /** Query pairs as sent (`name=value`, or anything for odd syntax). */
  query: string[];
  /** Replaces the whole request-target when set. */
  target?: string;
  suffix: string;
  protocol: string;
  headers: ([string, string] | [string])[];
  body?: BodyPart[];
  framing: Framing;
}

/** One hostile change to a request; `modelled` says whether the oracle predicts its outcome. */
interface Mutation {
  label: string;
  modelled: boolean;
  apply(draft: Draft): Draft;
}

function mutation(label: string, modelled: boolean, apply: (draft: Draft) => Draft): Mutation {
  return { label, modelled, apply };
}

function finish(draft: Draft): FuzzRequest {
  const target =
    draft.target ??
    `/${draft.segments.join('/')}${draft.query.length > 0 ? `?${draft.query.join('&')}` : ''}${draft.suffix}`;
  return {
    labels: draft.labels,
    method: draft.method,
    target,
    protocol: draft.protocol,
    headers: draft.headers,
    ...(draft.body ? { body: draft.body } : {}),
    framing: draft.framing,
    modelled: draft.modelled,
  };
}

function applyAll(draft: Draft, mutations: readonly Mutation[]): FuzzRequest {
  let current = draft;
  for (const change of mutations) {
    current = change.apply({ ...current, labels: [...current.labels, change.label] });
    current.modelled &&= change.modelled;
  }
  return finish(current);
}

// ---- Encoding ----------------------------------------------------------------------------------------------------

const PLACEHOLDER_SPLIT = new RegExp(`(${[...PLACEHOLDERS].map((name) => `\\${name}`).join('|')})`);
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** How a text is percent-encoded in a URL. */
type Encoding = 'percent' | 'plus' | 'all' | 'lower';

/** Percent-encodes a text (as UTF-8; lone surrogates as their WTF-8 bytes), leaving placeholders as they are. */
function encode(text: string, style: Encoding = 'percent'): string {
  return text
    .split(PLACEHOLDER_SPLIT)
    .map((piece) =>
      (PLACEHOLDERS as readonly string[]).includes(piece)
        ? piece
        : [...wtf8(piece)]
            .map((byte) => {
              const char = String.fromCharCode(byte);
              if (style === 'plus' && char === ' ') {
                return '+';
              }
              if (style !== 'all' && UNRESERVED.test(char)) {
                return char;
              }
              const hex = byte.toString(16).padStart(2, '0');
              return `%${style === 'lower' ? hex : hex.toUpperCase()}`;
            })
            .join(''),
    )
    .join('');
}

const encodingStyle = fc.constantFrom<Encoding>('percent', 'percent', 'percent', 'plus', 'all', 'lower');

/** A text as bytes, one character per byte (its UTF-8 form), for header values and raw targets. */
function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

// ---- Drafts of valid requests -------------------------------------------------------------------------------------

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function parametersIn(operation: OperationModel, location: ParameterModel['in']): ParameterModel[] {
  return operation.parameters.filter((parameter) => parameter.in === location);
}

/** The known values for a parameter whose example has an ID prefix the fixture knows (`apikey_`, `wrkspc_`). */
function knownFor(parameter: ParameterModel, context: ArbitraryContext): readonly string[] {
  const example = parameter.example ?? parameter.schema.example;
  const prefix = typeof example === 'string' ? /^[a-z]+_/.exec(example)?.[0] : undefined;
  return prefix === undefined ? [] : (context.knownByPrefix[prefix] ?? []);
}

const pools = new WeakMap<ArbitraryContext, ValuePools>();

/** Every known value, as one pool per context (the schema arbitraries are cached by pool). */
function poolsFor(context: ArbitraryContext): ValuePools {
  let found = pools.get(context);
  if (!found) {
    found = { strings: Object.values(context.knownByPrefix).flat() };
    pools.set(context, found);
  }
  return found;
}

const parameterTexts = new WeakMap<ParameterModel, fc.Arbitrary<string>>();

/** Valid text for a parameter, favouring the fixture's values for parameters that take its IDs. */
function parameterText(parameter: ParameterModel, context: ArbitraryContext): fc.Arbitrary<string> {
  let arbitrary = parameterTexts.get(parameter);
  if (!arbitrary) {
    const generated = validParameterText(parameter.schema, poolsFor(context));
    const known = knownFor(parameter, context);
    arbitrary =
      known.length === 0
        ? generated
        : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated });
    parameterTexts.set(parameter, arbitrary);
  }
  return arbitrary;
}

/** Valid body text: compact, pretty, with every non-ASCII character escaped, or padded with whitespace. */
function serializations(value: unknown): fc.Arbitrary<BodyPart[]> {
  const compact = jsonText(value);
  const escaped = compact.replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return fc
    .constantFrom<[string, string]>(
      ['compact', compact],
      ['compact', compact],
      ['pretty', JSON.stringify(JSON.parse(compact), null, 2)],
      ['escaped', escaped],
      ['padded', ` \r\n\t${compact}\n `],
    )
    .map(([, text]) => [{ text, encoding: 'utf8' }]);
}

/** A valid request of the operation: valid path and query values, credentials, version and body. */
function validDraft(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Draft> {
  const segments = operation.path.segments.map((segment) => {
    if ('literal' in segment) {
      return fc.constant(segment.literal);
    }
    const parameter = parametersIn(operation, 'path').find((p) => p.name === segment.parameter);
    if (!parameter) {
      throw new Error(`${operation.operationId}: no parameter declared for {${segment.parameter}}`);
    }
    return parameterText(parameter, context).map((text) => encode(text));
  });
  const queryParameters = parametersIn(operation, 'query');
  const query = fc
    .subarray(queryParameters)
    .chain((chosen) =>
      fc.tuple(
        ...chosen.map((parameter) =>
          fc
            .tuple(parameterText(parameter, context), encodingStyle)
            .map(([text, style]) => `${encode(parameter.name)}=${encode(text, style)}`),
        ),
      ),
    );
  const headerParameters = parametersIn(operation, 'header').filter(
    (p) => p.name.toLowerCase() !== context.model.credentialHeader,
  );
  const headers = fc.tuple(
    ...headerParameters.map((parameter) => {
      const value = validParameterText(parameter.schema, poolsFor(context)).map(utf8Bytes);
      const alias = HEADER_ALIASES[parameter.name.toLowerCase()];
      const name = alias
        ? fc.constantFrom(parameter.name, parameter.name, parameter.name, alias)
        : fc.constant(parameter.name);
      const header = fc.tuple(name, value).map(([n, v]): [string, string][] => [[n, v]]);
      return parameter.required ? header : fc.option(header, { nil: [] as [string, string][], freq: 4 });
    }),
  );
  const credential = fc.constantFrom('$ADMIN_KEY', '$ADMIN_KEY', '$ADMIN_KEY', '$OTHER_ADMIN_KEY');
  const bodySchema = operation.body;
  const body = bodySchema
    ? validValue(bodySchema.schema, poolsFor(context)).chain(serializations)
    : fc.constant(undefined);
  return fc.record({ segments: fc.tuple(...segments), query, headers, credential, body }).map(
    (chosen): Draft => ({
      labels: [operation.operationId],
      modelled: true,
      method: operation.method,
      segments: chosen.segments,
      query: chosen.query,
      suffix: '',
      protocol: 'HTTP/1.1',
      headers: [
        ['host', '$HOST'],
        [context.model.credentialHeader, chosen.credential],
        ...chosen.headers.flat(),
        ...(bodySchema
          ? ([['content-type', bodySchema.mediaTypes[0] ?? 'application/json']] as [string, string][])
          : []),
      ],
      ...(chosen.body ? { body: chosen.body } : {}),
      framing: { kind: 'length' },
    }),
  );
}

// ---- Helpers that change drafts ----------------------------------------------------------------------------------

const isHeader = (name: string) => (header: [string, string] | [string]) =>
  header[0].toLowerCase() === name.toLowerCase();

function setHeader(draft: Draft, name: string, value: string): Draft {
  return { ...draft, headers: [...draft.headers.filter((h) => !isHeader(name)(h)), [name, value]] };
}

function removeHeader(draft: Draft, name: string): Draft {
  return { ...draft, headers: draft.headers.filter((h) => !isHeader(name)(h)) };
}

function addHeader(draft: Draft, header: [string, string] | [string]): Draft {
  return { ...draft, headers: [...draft.headers, header] };
}

/** Replaces the pairs of a query parameter by one pair with an already encoded value. */
function setQuery(draft: Draft, name: string, encodedValue: string): Draft {
  const prefix = `${encode(name)}=`;
  return { ...draft, query: [...draft.query.filter((pair) => !pair.startsWith(prefix)), `${prefix}${encodedValue}`] };
}

function textBody(text: string): BodyPart[] {
  return [{ text, encoding: 'utf8' }];
}

function bytesBody(bytes: Buffer | string): BodyPart[] {
  return [{ text: typeof bytes === 'string' ? bytes : bytes.toString('latin1'), encoding: 'bytes' }];
}

const secret = fc.constantFrom(...SECRET_PLACEHOLDERS);
const anyId = fc.constantFrom(...ID_PLACEHOLDERS);

// ---- Parameters -------------------------------------------------------------------------------------------------

/** Hostile path and query parameters of an operation: invalid values, encodings, repeats, unknown names. */
function parameterMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const pools = poolsFor(context);
  const query = parametersIn(operation, 'query');
  const path = parametersIn(operation, 'path');
  const pathIndex = (name: string) =>
    operation.path.segments.findIndex((segment) => 'parameter' in segment && segment.parameter === name);
  const setSegment = (draft: Draft, name: string, value: string) => {
    const segments = [...draft.segments];
    segments[pathIndex(name)] = value;
    return { ...draft, segments };
  };
  const declared = new Set(query.map((p) => p.name));
  const unknownName = fc.oneof(
    fc.stringMatching(/^[a-z_]{1,12}$/).filter((name) => !declared.has(name)),
    fc.constantFrom(
      ...path.map((p) => p.name),
      ...operation.parameters.filter((p) => p.in === 'header').map((p) => p.name),
      context.model.credentialHeader,
      '__proto__',
      'constructor',
      'toString',
      ...SECRET_PLACEHOLDERS,
      '😀',
      'a b',
    ),
  );
  const options: fc.Arbitrary<Mutation>[] = [
    fc
      .tuple(unknownName, fc.oneof(fc.constantFrom('1', '', 'active'), secret, anyId), encodingStyle)
      .map(([name, value, style]) =>
        mutation(`query: unknown parameter`, true, (d) => ({
          ...d,
          query: [...d.query, `${encode(name, style)}=${encode(value, style)}`],
        })),
      ),
    fc
      .constantFrom(...ODD_QUERY_SYNTAX)
      .map((raw) =>
        mutation(`query: odd syntax ${JSON.stringify(raw)}`, true, (d) => ({ ...d, query: [...d.query, raw] })),
      ),
    // Query parsers stop counting somewhere (Node's querystring at 1000 pairs): what lies beyond must still count.
    fc.constantFrom(998, 999, 1000, 1001, 5000).map((count) =>
      mutation(`query: ${count} empty pairs first`, true, (d) => ({
        ...d,
        query: ['&'.repeat(count - 1), ...d.query],
      })),
    ),
  ];
  if (query.length > 0) {
    const parameter = fc.constantFrom(...query);
    options.push(
      // The hostile forms of each parameter's type weigh most: integers in every lenient form, lengths, enums.
      ...Array.from({ length: 4 }, () =>
        fc.oneof(
          ...query.map((p) =>
            fc
              .tuple(invalidParameterText(p.schema, pools), encodingStyle)
              .map(([text, style]) =>
                mutation(`query ${p.name}: invalid value`, true, (d) => setQuery(d, p.name, encode(text, style))),
              ),
          ),
        ),
      ),
      fc
        .tuple(parameter, fc.constantFrom(...BAD_PERCENT_ENCODINGS), fc.constantFrom('', 'a', '1'))
        .map(([p, bad, lead]) =>
          mutation(`query ${p.name}: bad percent-encoding ${bad}`, true, (d) => setQuery(d, p.name, `${lead}${bad}`)),
        ),
      fc
        .tuple(parameter, fc.constantFrom(...ODD_PERCENT_ENCODINGS), fc.constantFrom('', 'a', '1', '$KEY_ID'))
        .map(([p, odd, lead]) =>
          mutation(`query ${p.name}: odd percent-encoding ${odd}`, true, (d) => setQuery(d, p.name, `${lead}${odd}`)),
        ),
      fc
        .tuple(parameter, fc.constantFrom('\ud800', 'a\udc00', '\udbff\udbff', '😀\ud83d'))
        .map(([p, text]) =>
          mutation(`query ${p.name}: lone surrogate`, true, (d) => setQuery(d, p.name, encode(text))),
        ),
      fc.tuple(parameter, fc.boolean()).chain(([p, same]) =>
        fc.tuple(parameterText(p, context), parameterText(p, context)).map(([first, second]) =>
          mutation(`query ${p.name}: repeated`, true, (d) => ({
            ...d,
            query: [
              ...d.query,
              `${encode(p.name)}=${encode(first)}`,
              `${encode(p.name)}=${encode(same ? first : second)}`,
            ],
          })),
        ),
      ),
      fc
        .tuple(parameter, fc.oneof(secret, anyId))
        .map(([p, value]) => mutation(`query ${p.name}: secret or ID`, true, (d) => setQuery(d, p.name, value))),
      fc
        .tuple(parameter, fc.constantFrom(255, 256, 2000, 8000), fc.constantFrom('x', '😀'))
        .map(([p, length, unit]) =>
          mutation(`query ${p.name}: ${length} x ${unit}`, true, (d) =>
            setQuery(d, p.name, encode(unit.repeat(length))),
          ),
        ),
      fc
        .tuple(parameter, fc.constantFrom('\xe9', '\xc3\xa9', '\xff', '\x7f', '\x01', ' ', '"', '<', '`', '{', '|'))
        .map(([p, raw]) =>
          mutation(`query ${p.name}: raw byte ${JSON.stringify(raw)}`, false, (d) => setQuery(d, p.name, `a${raw}`)),
        ),
    );
  }
  if (path.length > 0) {
    const parameter = fc.constantFrom(...path);
    options.push(
      fc.oneof(
        ...path.map((p) =>
          fc
            .tuple(invalidParameterText(p.schema, pools), encodingStyle)
            .map(([text, style]) =>
              mutation(`path ${p.name}: invalid value`, true, (d) =>
                setSegment(d, p.name, encode(text, style === 'plus' ? 'percent' : style)),
              ),
            ),
        ),
      ),
      fc
        .tuple(
          parameter,
          fc.constantFrom(...BAD_PERCENT_ENCODINGS, ...ODD_PERCENT_ENCODINGS),
          fc.constantFrom('', '$KEY_ID'),
        )
        .map(([p, odd, id]) =>
          mutation(`path ${p.name}: percent-encoding ${odd}`, true, (d) => setSegment(d, p.name, `${id}${odd}`)),
        ),
      fc
        .tuple(parameter, fc.oneof(secret, anyId, fc.constantFrom(...UNICODE_EDGE_STRINGS)), encodingStyle)
        .map(([p, value, style]) =>
          mutation(`path ${p.name}: secret, ID or odd string`, true, (d) =>
            setSegment(d, p.name, encode(value, style === 'plus' ? 'percent' : style)),
          ),
        ),
      fc
        .tuple(parameter, fc.constantFrom('\xe9', '\xff', ' ', '"', '\x00'))
        .map(([p, raw]) =>
          mutation(`path ${p.name}: raw byte ${JSON.stringify(raw)}`, false, (d) =>
            setSegment(d, p.name, `$KEY_ID${raw}`),
          ),
        ),
    );
  }
  return fc.oneof(...options);
}

// ---- Bodies -----------------------------------------------------------------------------------------------------

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
function bodyMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const declared = operation.body;
  if (!declared) {
    throw new Error(`${operation.operationId} takes no body`);
  }
  const pools = poolsFor(context);
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
  );
}

/** Bodies sent to operations that take none (GET with a body): the server must ignore them. */
function unexpectedBodyMutations(context: ArbitraryContext): fc.Arbitrary<Mutation> {
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

// ---- Headers ----------------------------------------------------------------------------------------------------

function headerMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const credential = context.model.credentialHeader;
  const versioned = parametersIn(operation, 'header').filter((p) => p.name.toLowerCase() !== credential);
  const credentials = fc.oneof(
    fc
      .constantFrom('$API_KEY_SECRET', '$OTHER_API_KEY_SECRET', '$DISABLED_ADMIN_KEY')
      .map((value) => mutation(`${credential}: ${value}`, true, (d) => setHeader(d, credential, value))),
    fc
      .constantFrom(...ODD_CREDENTIALS)
      .map((value) =>
        mutation(`${credential}: ${JSON.stringify(value).slice(0, 40)}`, true, (d) =>
          setHeader(d, credential, utf8Bytes(value)),
        ),
      ),
    fc.constant(mutation(`${credential}: missing`, true, (d) => removeHeader(d, credential))),
    fc
      .constantFrom('$ADMIN_KEY', '$OTHER_ADMIN_KEY', '$DISABLED_ADMIN_KEY')
      .map((value) => mutation(`${credential}: twice`, true, (d) => addHeader(d, [credential, value]))),
    fc
      .constantFrom(
        credential.toUpperCase(),
        credential.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`),
      )
      .map((name) =>
        mutation(`${credential}: named ${name}`, true, (d) => ({
          ...d,
          headers: d.headers.map((h): [string, string] | [string] =>
            isHeader(credential)(h) && h.length === 2 ? [name, h[1]] : h,
          ),
        })),
      ),
  );
  // Credentials weigh as much as all other headers together: each outcome (401, 403, 200) needs its share.
  const options: fc.Arbitrary<Mutation>[] = [
    ...Array.from({ length: 8 }, () => credentials),
    fc
      .tuple(fc.constantFrom(...MISPLACED_SECRET_HEADERS), secret, fc.constantFrom('', 'Bearer ', 'x='))
      .map(([name, value, prefix]) =>
        mutation(`secret in ${name}`, true, (d) => addHeader(d, [name, `${prefix}${value}`])),
      ),
    secret.map((value) => mutation('secret as a header name', true, (d) => addHeader(d, [value, '1']))),
    fc
      .constantFrom(...HARMLESS_HEADERS)
      .map((header) => mutation(`header ${header[0]}: ${header[1]}`, true, (d) => addHeader(d, [...header]))),
    fc
      .constantFrom(...PROTOCOL_HEADERS)
      .map((header) => mutation(`header ${header[0]}: ${header[1]}`, false, (d) => addHeader(d, [...header]))),
    fc
      .constantFrom<[string, (d: Draft) => Draft]>(
        ['host: missing', (d) => removeHeader(d, 'host')],
        ['host: twice', (d) => addHeader(d, ['host', 'evil.example'])],
        ['host: empty', (d) => setHeader(d, 'host', '')],
        ['host: another', (d) => setHeader(d, 'host', 'evil.example:1')],
        ['host: a secret', (d) => setHeader(d, 'host', '$ADMIN_KEY')],
      )
      .map(([label, apply]) => mutation(label, false, apply)),
    fc
      .constantFrom(4096, 12_000, 17_000, 40_000, 70_000)
      .map((size) => mutation(`a ${size}-byte header`, false, (d) => addHeader(d, ['x-filler', 'f'.repeat(size)]))),
    fc.constantFrom(100, 1000, 2100).map((count) =>
      mutation(`${count} headers`, false, (d) => ({
        ...d,
        headers: [...d.headers, ...Array.from({ length: count }, (_, i): [string, string] => [`x-h${i}`, 'v'])],
      })),
    ),
    fc
      .tuple(
        fc.constantFrom('\x01', '\x7f', '\xe9', '\xc3\xa9', '\x00', '\r', '\x0b'),
        fc.constantFrom('x-odd', credential),
      )
      .map(([raw, name]) =>
        mutation(`a byte in ${name}: ${JSON.stringify(raw)}`, false, (d) => addHeader(d, [name, `a${raw}b`])),
      ),
    fc
      .constantFrom<[string, [string, string] | [string]]>(
        ['obs-fold', ['x-folded', 'a\r\n b']],
        ['a line without colon', ['no colon here']],
        ['an empty header name', [': value']],
        ['a space before the colon', [`${credential} `, '$ADMIN_KEY']],
        ['a header name with odd characters', ['x(y)', '1']],
        ['a header name with a non-ASCII byte', ['x-\xe9', '1']],
        ['a lone CR in the head', ['x-a', 'b\rc: d']],
      )
      .map(([label, header]) => mutation(label, false, (d) => addHeader(d, header))),
  ];
  for (const parameter of versioned) {
    const alias = HEADER_ALIASES[parameter.name.toLowerCase()];
    const odd = fc.constantFrom(...ODD_VERSIONS);
    options.push(
      odd.map((value) =>
        mutation(`${parameter.name}: ${JSON.stringify(value).slice(0, 40)}`, true, (d) =>
          setHeader(d, parameter.name, utf8Bytes(value)),
        ),
      ),
      fc.constant(mutation(`${parameter.name}: missing`, true, (d) => removeHeader(d, parameter.name))),
      validParameterText(parameter.schema, poolsFor(context)).map((value) =>
        mutation(`${parameter.name}: twice`, true, (d) => addHeader(d, [parameter.name, value])),
      ),
      fc.constant(
        mutation(`${parameter.name}: named ${parameter.name.toUpperCase()}`, true, (d) => {
          const value = d.headers.find(isHeader(parameter.name))?.[1] ?? '';
          return addHeader(removeHeader(d, parameter.name), [parameter.name.toUpperCase(), value]);
        }),
      ),
    );
    if (alias) {
      options.push(
        fc
          .tuple(fc.oneof(validParameterText(parameter.schema, poolsFor(context)), odd), fc.boolean())
          .map(([value, keep]) =>
            mutation(
              `${alias}: ${JSON.stringify(value).slice(0, 40)}${keep ? '' : `, ${parameter.name} missing`}`,
              true,
              (d) => addHeader(keep ? d : removeHeader(d, parameter.name), [alias, utf8Bytes(value)]),
            ),
          ),
      );
    }
  }
  return fc.oneof(...options);
}

// ---- Methods, paths and protocols ---------------------------------------------------------------------------------

/** Whether Node's parser reads this method token (a known method, in upper case). */
const PARSED_METHODS = new Set([
  'GET',
  'POST',
  'HEAD',
  'OPTIONS',
  'DELETE',
  'PUT',
  'PATCH',
  'TRACE',
  'PROPFIND',
  'SEARCH',
  'QUERY',
  'PURGE',
  'LINK',
  'M-SEARCH',
]);

function methodAndPathMutations(context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const literals = [
    ...new Set(context.model.paths.flatMap((p) => p.segments.flatMap((s) => ('literal' in s ? [s.literal] : [])))),
  ];
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(...ODD_METHODS)
        .map((method) =>
          mutation(`method ${JSON.stringify(method)}`, PARSED_METHODS.has(method), (d) => ({ ...d, method })),
        ),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.constantFrom(...ODD_SEGMENTS), fc.nat(), fc.boolean()).map(([segment, at, replace]) =>
        mutation(
          `path: ${replace ? 'segment replaced by' : 'segment inserted:'} ${JSON.stringify(segment).slice(0, 40)}`,
          true,
          (d) => {
            const segments = [...d.segments];
            segments.splice(at % (segments.length + (replace ? 0 : 1)), replace ? 1 : 0, segment);
            return { ...d, segments };
          },
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<[string, (d: Draft) => Draft]>(
          ['path: trailing slash', (d) => ({ ...d, segments: [...d.segments, ''] })],
          ['path: double slash', (d) => ({ ...d, segments: ['', ...d.segments] })],
          ['path: last segment dropped', (d) => ({ ...d, segments: d.segments.slice(0, -1) })],
          ['path: first segment dropped', (d) => ({ ...d, segments: d.segments.slice(1) })],
          [
            'path: upper case',
            (d) => ({ ...d, segments: d.segments.map((s) => (s.startsWith('$') ? s : s.toUpperCase())) }),
          ],
          ['path: extra segment', (d) => ({ ...d, segments: [...d.segments, 'secret'] })],
          ['path: root', (d) => ({ ...d, segments: [''] })],
          ['path: dot segments', (d) => ({ ...d, segments: [d.segments[0] ?? '', '..', ...d.segments] })],
          [
            'path: literal percent-encoded',
            (d) => ({ ...d, segments: d.segments.map((s) => (literals.includes(s) ? encode(s, 'all') : s)) }),
          ],
        )
        .map(([label, apply]) => mutation(label, true, apply)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...literals, 'v2', 'admin', 'api_keys', 'organizations'), fc.nat())
        .map(([literal, at]) =>
          mutation(`path: unknown segment ${literal}`, true, (d) => {
            const segments = [...d.segments];
            segments.splice(at % (segments.length + 1), 1, literal);
            return { ...d, segments };
          }),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<[string, (d: Draft) => Draft]>(
          ['target: absolute-form', (d) => ({ ...d, target: `http://$HOST/${d.segments.join('/')}` })],
          [
            'target: absolute-form, another host',
            (d) => ({ ...d, target: `http://evil.example/${d.segments.join('/')}` }),
          ],
          ['target: *', (d) => ({ ...d, target: '*' })],
          ['target: fragment', (d) => ({ ...d, suffix: '#fragment' })],
          ['target: empty query', (d) => ({ ...d, suffix: d.query.length > 0 ? '' : '?' })],
          ['target: no leading slash', (d) => ({ ...d, target: d.segments.join('/') })],
          ['target: raw space', (d) => ({ ...d, suffix: ' x' })],
          ['target: raw non-ASCII', (d) => ({ ...d, suffix: utf8Bytes('é') })],
          ['target: backslashes', (d) => ({ ...d, target: `\\${d.segments.join('\\')}` })],
          ['target: 9000-byte path', (d) => ({ ...d, segments: [...d.segments, 'p'.repeat(9000)] })],
          ['target: 20000-byte path', (d) => ({ ...d, segments: [...d.segments, 'p'.repeat(20_000)] })],
        )
        .map(([label, apply]) => mutation(label, false, apply)),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...ODD_PROTOCOLS)
        .map((protocol) =>
          mutation(`protocol ${JSON.stringify(protocol)}`, protocol === 'HTTP/1.0', (d) => ({ ...d, protocol })),
        ),
    },
  );
}

// ---- Families ---------------------------------------------------------------------------------------------------

/** A family of requests: a valid request of some operation, and up to `max` mutations of the family's kind. */
function family(
  name: string,
  operations: readonly OperationModel[],
  context: ArbitraryContext,
  mutations: (operation: OperationModel) => fc.Arbitrary<Mutation>,
  max: number,
): fc.Arbitrary<FuzzRequest> {
  // One arbitrary per operation, built once: a chain would rebuild them for every request.
  const perOperation = operations.map((operation) =>
    fc
      .tuple(validDraft(operation, context), fc.array(mutations(operation), { minLength: 0, maxLength: max }))
      .map(([draft, changes]) => applyAll({ ...draft, labels: [name, ...draft.labels] }, changes)),
  );
  return fc.oneof(...perOperation);
}

/** The families of requests, each fuzzed by its own property so that a finding in one does not hide the others. */
export function requestFamilies(context: ArbitraryContext): Record<string, fc.Arbitrary<FuzzRequest>> {
  const { operations } = context.model;
  const withBody = operations.filter((operation) => operation.body && BODY_METHODS.has(operation.method));
  const withoutBody = operations.filter((operation) => !operation.body);
  const bodies: fc.Arbitrary<FuzzRequest>[] = [];
  if (withBody.length > 0) {
    bodies.push(family('bodies', withBody, context, (operation) => bodyMutations(operation, context), 3));
  }
  if (withoutBody.length > 0) {
    bodies.push(family('bodies', withoutBody, context, () => unexpectedBodyMutations(context), 1));
  }
  return {
    parameters: family('parameters', operations, context, (operation) => parameterMutations(operation, context), 3),
    bodies:
      bodies.length === 1
        ? (bodies[0] as fc.Arbitrary<FuzzRequest>)
        : fc.oneof(
            { weight: 4, arbitrary: bodies[0] as fc.Arbitrary<FuzzRequest> },
            { weight: 1, arbitrary: bodies[1] as fc.Arbitrary<FuzzRequest> },
          ),
    headers: family('headers', operations, context, (operation) => headerMutations(operation, context), 3),
    'methods and paths': family('methods and paths', operations, context, () => methodAndPathMutations(context), 2),
  };
}
