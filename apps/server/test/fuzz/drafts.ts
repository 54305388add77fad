/**
 * Valid requests of an operation of one API version, derived from its document, as drafts that the mutations of
 * the other `*-mutations.ts` modules change; and the helpers those mutations share.
 */
import fc from 'fast-check';
import { validParameterText, wtf8 } from './parameter-values.js';
import { ID_PLACEHOLDERS, PLACEHOLDERS, SECRET_PLACEHOLDERS, type SecretPlaceholder } from './placeholders.js';
import type { BodyPart, Framing, FuzzRequest } from './request.js';
import { examplePrefix, jsonText, type ValuePools, validValue } from './schema-values.js';
import type { OperationModel, ParameterModel, SpecModel } from './spec-model.js';

/** Header aliases the spec states in prose: `anthropic-version` stands for `vendor-version` when that is absent. */
export const HEADER_ALIASES: Readonly<Record<string, string>> = { 'vendor-version': 'anthropic-version' };

/** The header that carries a bearer token. */
export const AUTHORIZATION = 'authorization';

/** What the arbitraries of one API version need besides its document: the fixture's values. */
export interface ArbitraryContext {
  model: SpecModel;
  /** Every API version, for requests that name another than the operation's. */
  versions: readonly string[];
  /** Known values (placeholders or fixture values) for the fields and parameters that take them. */
  pools: ValuePools;
  /** The fixture's active admin and verifier keys, by the prefix of their secret (`sk-adm-`, `sk-vfy-`). */
  credentialsByPrefix: Readonly<Record<string, readonly SecretPlaceholder[]>>;
}

/** A request under construction. */
export interface Draft {
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
export interface Mutation {
  label: string;
  modelled: boolean;
  apply(draft: Draft): Draft;
}

/** A mutation with its label, and whether the oracle predicts what it does. */
export function mutation(label: string, modelled: boolean, apply: (draft: Draft) => Draft): Mutation {
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

/** The request a draft becomes once each mutation has changed it, in order. */
export function applyAll(draft: Draft, mutations: readonly Mutation[]): FuzzRequest {
  let current = draft;
  for (const change of mutations) {
    current = change.apply({ ...current, labels: [...current.labels, change.label] });
    current.modelled &&= change.modelled;
  }
  return finish(current);
}

// ---- Encoding ----------------------------------------------------------------------------------------------------

const PLACEHOLDER_SPLIT = new RegExp(
  `(${[...PLACEHOLDERS]
    .sort((a, b) => b.length - a.length)
    .map((name) => `\\${name}`)
    .join('|')})`,
);
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
// RFC 3986 reserved characters that a parameter with `allowReserved` may hold as they are; not `&`, `#` and `+`,
// which a query string reads as separators or a space.
const KEPT_RESERVED = /^[:/?[\]@!$'()*,;=]$/;

/** How a text is percent-encoded in a URL; `reserved` leaves the reserved characters `allowReserved` permits. */
export type Encoding = 'percent' | 'plus' | 'all' | 'lower' | 'reserved';

/** Percent-encodes a text (as UTF-8; lone surrogates as their WTF-8 bytes), leaving placeholders as they are. */
export function encode(text: string, style: Encoding = 'percent'): string {
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
              if ((style !== 'all' && UNRESERVED.test(char)) || (style === 'reserved' && KEPT_RESERVED.test(char))) {
                return char;
              }
              const hex = byte.toString(16).padStart(2, '0');
              return `%${style === 'lower' ? hex : hex.toUpperCase()}`;
            })
            .join(''),
    )
    .join('');
}

/** The encodings a valid value is sent in, plain percent-encoding most often. */
export const encodingStyle = fc.constantFrom<Encoding>('percent', 'percent', 'percent', 'plus', 'all', 'lower');

/** A text as bytes, one character per byte (its UTF-8 form), for header values and raw targets. */
export function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

// ---- Drafts of valid requests -------------------------------------------------------------------------------------

/** Methods that carry a body. */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The operation's parameters in one location. */
export function parametersIn(operation: OperationModel, location: ParameterModel['in']): ParameterModel[] {
  return operation.parameters.filter((parameter) => parameter.in === location);
}

/** The schema of one value of a parameter: an array parameter's items, given once per item (`type=a&type=b`). */
export function valueSchemaOf(parameter: ParameterModel): ParameterModel['schema'] {
  return parameter.schema.type === 'array' ? (parameter.schema.items ?? {}) : parameter.schema;
}

const parameterTexts = new WeakMap<ParameterModel, fc.Arbitrary<string>>();

/**
 * Valid text for one value of a parameter, favouring the fixture's values for a parameter that takes its IDs (its
 * example has their prefix) and now and then another kind of the fixture's IDs, which is just as valid a string.
 */
export function parameterText(parameter: ParameterModel, context: ArbitraryContext): fc.Arbitrary<string> {
  let arbitrary = parameterTexts.get(parameter);
  if (!arbitrary) {
    const { pools } = context;
    const generated = validValue(valueSchemaOf(parameter), pools).map((value) =>
      typeof value === 'string' ? value : jsonText(value),
    );
    const prefix = examplePrefix(parameter.example ?? parameter.schema.example);
    const known = prefix === undefined ? [] : (pools.byPrefix[prefix] ?? []);
    const otherIds = Object.entries(pools.byPrefix).flatMap(([other, values]) =>
      other !== prefix && other.endsWith('_') ? values : [],
    );
    arbitrary =
      known.length === 0
        ? generated
        : fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...known) },
            { weight: 2, arbitrary: generated },
            { weight: 1, arbitrary: fc.constantFrom(...otherIds) },
          );
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

/** Valid query pairs of one parameter: one pair, one per item for an array, or an empty one where that is absent. */
function queryPairs(parameter: ParameterModel, context: ArbitraryContext): fc.Arbitrary<string[]> {
  const style = parameter.allowReserved
    ? fc.constantFrom<Encoding>('percent', 'reserved', 'reserved', 'lower')
    : encodingStyle;
  const pair = fc
    .tuple(parameterText(parameter, context), style)
    .map(([text, chosen]) => `${encode(parameter.name)}=${encode(text, chosen)}`);
  if (parameter.schema.type === 'array') {
    const { minItems = 1, maxItems = 3 } = parameter.schema;
    return fc.array(pair, { minLength: minItems, maxLength: Math.min(maxItems, 3) });
  }
  if (parameter.allowEmptyValue) {
    return fc.oneof(
      { weight: 6, arbitrary: pair.map((one) => [one]) },
      { weight: 1, arbitrary: fc.constant<string[]>([`${encode(parameter.name)}=`]) },
    );
  }
  return pair.map((one) => [one]);
}

/** Where a valid draft sends its credential: the credential header, or `Authorization: Bearer`. */
export type Placement = 'header' | 'bearer';

/** The headers that present `secret` in `placement`, under the spec's credential header name. */
export function credentialHeaders(secret: string, placement: Placement, model: SpecModel): [string, string][] {
  return placement === 'header' ? [[model.credentialHeader, secret]] : [[AUTHORIZATION, `Bearer ${secret}`]];
}

/** A valid credential of the operation: an admin key of either organization, or a key its security also takes. */
function validCredential(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<[string, string][]> {
  const weighted = operation.credentialPrefixes.flatMap((prefix) =>
    (context.credentialsByPrefix[prefix] ?? []).map((secret) => ({
      weight: secret === '$ADMIN_KEY' ? 4 : 1,
      arbitrary: fc.constant(secret),
    })),
  );
  if (weighted.length === 0) {
    throw new Error(`${operation.operationId}: no credential of the fixture fits its security`);
  }
  const placements = context.model.bearer
    ? fc.constantFrom<Placement>('header', 'header', 'bearer')
    : fc.constant('header' as const);
  return fc
    .tuple(fc.oneof(...weighted), placements)
    .map(([secret, placement]) => credentialHeaders(secret, placement, context.model));
}

/** A valid request of the operation: valid path and query values, credentials, version and body. */
export function validDraft(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Draft> {
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
  const query = fc
    .subarray(parametersIn(operation, 'query'))
    .chain((chosen) => fc.tuple(...chosen.map((parameter) => queryPairs(parameter, context))))
    .map((pairs) => pairs.flat());
  const headerParameters = parametersIn(operation, 'header').filter(
    (p) => p.name.toLowerCase() !== context.model.credentialHeader,
  );
  const headers = fc.tuple(
    ...headerParameters.map((parameter) => {
      const value = validParameterText(parameter.schema, context.pools).map(utf8Bytes);
      const alias = HEADER_ALIASES[parameter.name.toLowerCase()];
      const name = alias
        ? fc.constantFrom(parameter.name, parameter.name, parameter.name, alias)
        : fc.constant(parameter.name);
      const header = fc.tuple(name, value).map(([n, v]): [string, string][] => [[n, v]]);
      return parameter.required ? header : fc.option(header, { nil: [] as [string, string][], freq: 4 });
    }),
  );
  const credential = operation.public ? fc.constant([] as [string, string][]) : validCredential(operation, context);
  const bodySchema = operation.body;
  const body = bodySchema ? validValue(bodySchema.schema, context.pools).chain(serializations) : fc.constant(undefined);
  return fc.record({ segments: fc.tuple(...segments), query, headers, credential, body }).map(
    (chosen): Draft => ({
      labels: [`${context.model.version} ${operation.operationId}`],
      modelled: true,
      method: operation.method,
      segments: chosen.segments,
      query: chosen.query,
      suffix: '',
      protocol: 'HTTP/1.1',
      headers: [
        ['host', '$HOST'],
        ...chosen.credential,
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

/** Whether a header line has this name, in any letter case. */
export const isHeader = (name: string) => (header: [string, string] | [string]) =>
  header[0].toLowerCase() === name.toLowerCase();

/** The draft with every header of this name replaced by one. */
export function setHeader(draft: Draft, name: string, value: string): Draft {
  return { ...draft, headers: [...draft.headers.filter((h) => !isHeader(name)(h)), [name, value]] };
}

/** The draft without any header of this name. */
export function removeHeader(draft: Draft, name: string): Draft {
  return { ...draft, headers: draft.headers.filter((h) => !isHeader(name)(h)) };
}

/** The draft with one more header line. */
export function addHeader(draft: Draft, header: [string, string] | [string]): Draft {
  return { ...draft, headers: [...draft.headers, header] };
}

/** Replaces the pairs of a query parameter by one pair with an already encoded value. */
export function setQuery(draft: Draft, name: string, encodedValue: string): Draft {
  const prefix = `${encode(name)}=`;
  return { ...draft, query: [...draft.query.filter((pair) => !pair.startsWith(prefix)), `${prefix}${encodedValue}`] };
}

/** A body of text, written as UTF-8. */
export function textBody(text: string): BodyPart[] {
  return [{ text, encoding: 'utf8' }];
}

/** A body of raw bytes. */
export function bytesBody(bytes: Buffer | string): BodyPart[] {
  return [{ text: typeof bytes === 'string' ? bytes : bytes.toString('latin1'), encoding: 'bytes' }];
}

/** Any of the fixture's secrets. */
export const secret = fc.constantFrom(...SECRET_PLACEHOLDERS);
/** Any of the fixture's IDs. */
export const anyId = fc.constantFrom(...ID_PLACEHOLDERS);
