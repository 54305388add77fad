/**
 * Hostile headers: credentials of every kind in both places the spec takes them (the credential header and
 * `Authorization: Bearer`), misplaced secrets, odd versions and aliases, and headers that change how HTTP is read.
 */
import fc from 'fast-check';
import {
  type ArbitraryContext,
  AUTHORIZATION,
  addHeader,
  credentialHeaders,
  type Draft,
  HEADER_ALIASES,
  isHeader,
  type Mutation,
  mutation,
  type Placement,
  parametersIn,
  removeHeader,
  secret,
  setHeader,
  utf8Bytes,
} from './drafts.js';
import {
  HARMLESS_HEADERS,
  MISPLACED_SECRET_HEADERS,
  ODD_AUTHORIZATIONS,
  ODD_CREDENTIALS,
  ODD_VERSIONS,
  PROTOCOL_HEADERS,
} from './hostile.js';
import { validParameterText } from './parameter-values.js';
import type { OperationModel } from './spec-model.js';

/** Hostile credentials: every secret of the fixture and odd values, in either place, missing, twice, or both. */
function credentialMutations(context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const { model } = context;
  const credential = model.credentialHeader;
  const withoutCredential = (d: Draft) => removeHeader(removeHeader(d, credential), AUTHORIZATION);
  const present = (d: Draft, value: string, where: Placement) => ({
    ...withoutCredential(d),
    headers: [...withoutCredential(d).headers, ...credentialHeaders(value, where, model)],
  });
  const placement = model.bearer ? fc.constantFrom<Placement>('header', 'bearer') : fc.constant<Placement>('header');
  return fc.oneof(
    fc
      .tuple(secret, placement)
      .map(([value, where]) => mutation(`credential: ${value} in ${where}`, true, (d) => present(d, value, where))),
    fc
      .tuple(fc.constantFrom(...ODD_CREDENTIALS), placement)
      .map(([value, where]) =>
        mutation(`credential: ${JSON.stringify(value).slice(0, 40)} in ${where}`, true, (d) =>
          present(d, utf8Bytes(value), where),
        ),
      ),
    fc.constant(mutation('credential: missing', true, withoutCredential)),
    fc
      .tuple(fc.constantFrom('$ADMIN_KEY', '$OTHER_ADMIN_KEY', '$DISABLED_ADMIN_KEY', '$VERIFIER_KEY'), placement)
      .map(([value, where]) =>
        mutation(`credential: twice in ${where}`, true, (d) => ({
          ...d,
          headers: [...d.headers, ...credentialHeaders(value, where, model)],
        })),
      ),
    // Both places: the credential header wins when it holds a value, and gives way to the bearer token when empty.
    fc.tuple(secret, secret, fc.boolean()).map(([inHeader, bearer, empty]) =>
      mutation(`credential: ${empty ? 'empty' : inHeader} and bearer ${bearer}`, true, (d) => ({
        ...withoutCredential(d),
        headers: [
          ...withoutCredential(d).headers,
          [credential, empty ? '' : inHeader],
          ...credentialHeaders(bearer, 'bearer', model),
        ],
      })),
    ),
    fc
      .tuple(fc.constantFrom(...ODD_AUTHORIZATIONS), fc.boolean())
      .map(([value, keep]) =>
        mutation(`${AUTHORIZATION}: ${JSON.stringify(value).slice(0, 40)}${keep ? '' : ', alone'}`, true, (d) =>
          setHeader(keep ? d : removeHeader(d, credential), AUTHORIZATION, utf8Bytes(value)),
        ),
      ),
    fc
      .constantFrom(
        credential.toUpperCase(),
        credential.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`),
        'AUTHORIZATION',
      )
      .map((name) =>
        mutation(`credential: named ${name}`, true, (d) => ({
          ...d,
          headers: d.headers.map((h): [string, string] | [string] =>
            isHeader(name)(h) && h.length === 2 ? [name, h[1]] : h,
          ),
        })),
      ),
  );
}

/** Hostile headers of an operation: credentials weigh as much as all the others together. */
export function headerMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const credential = context.model.credentialHeader;
  const versioned = parametersIn(operation, 'header').filter((p) => p.name.toLowerCase() !== credential);
  const credentials = credentialMutations(context);
  // Each outcome (401, 403, 200) needs its share.
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
    // Another supported version than the operation's, as well as unsupported ones.
    const odd = fc.constantFrom(...ODD_VERSIONS, ...context.versions);
    options.push(
      odd.map((value) =>
        mutation(`${parameter.name}: ${JSON.stringify(value).slice(0, 40)}`, true, (d) =>
          setHeader(d, parameter.name, utf8Bytes(value)),
        ),
      ),
      fc.constant(mutation(`${parameter.name}: missing`, true, (d) => removeHeader(d, parameter.name))),
      validParameterText(parameter.schema, context.pools).map((value) =>
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
          .tuple(fc.oneof(validParameterText(parameter.schema, context.pools), odd), fc.boolean())
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
