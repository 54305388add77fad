/**
 * Hostile path and query parameters, derived from each operation's parameters: invalid values of each type,
 * percent-encodings, repeats, unknown names, secrets and IDs where they do not belong.
 */
import fc from 'fast-check';
import {
  type ArbitraryContext,
  anyId,
  type Draft,
  encode,
  encodingStyle,
  type Mutation,
  mutation,
  parametersIn,
  parameterText,
  secret,
  setQuery,
  valueSchemaOf,
} from './drafts.js';
import { BAD_PERCENT_ENCODINGS, ODD_PERCENT_ENCODINGS, ODD_QUERY_SYNTAX } from './hostile.js';
import { invalidParameterText } from './parameter-values.js';
import { SECRET_PLACEHOLDERS } from './placeholders.js';
import { UNICODE_EDGE_STRINGS } from './schema-values.js';
import type { OperationModel } from './spec-model.js';

/** Hostile path and query parameters of an operation: invalid values, encodings, repeats, unknown names. */
export function parameterMutations(operation: OperationModel, context: ArbitraryContext): fc.Arbitrary<Mutation> {
  const { pools } = context;
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
              .tuple(invalidParameterText(valueSchemaOf(p), pools), encodingStyle)
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
  const arrays = query.filter((p) => p.schema.type === 'array');
  if (arrays.length > 0) {
    // An array parameter is given once per item: too many items, items joined by commas, one valid and one not.
    options.push(
      fc.constantFrom(...arrays).chain((p) =>
        fc
          .tuple(
            fc.array(parameterText(p, context), { minLength: (p.schema.maxItems ?? 8) + 1, maxLength: 12 }),
            fc.constantFrom('pairs', 'commas'),
          )
          .map(([items, form]) =>
            mutation(`query ${p.name}: ${items.length} items as ${form}`, true, (d) => ({
              ...d,
              query: [
                ...d.query.filter((pair) => !pair.startsWith(`${encode(p.name)}=`)),
                ...(form === 'pairs'
                  ? items.map((item) => `${encode(p.name)}=${encode(item)}`)
                  : [
                      `${encode(p.name)}=${items
                        .slice(0, 2)
                        .map((item) => encode(item))
                        .join(',')}`,
                    ]),
              ],
            })),
          ),
      ),
      fc.constantFrom(...arrays).chain((p) =>
        fc.tuple(parameterText(p, context), invalidParameterText(valueSchemaOf(p), pools)).map(([good, bad]) =>
          mutation(`query ${p.name}: a valid item and an invalid one`, true, (d) => ({
            ...d,
            query: [...d.query, `${encode(p.name)}=${encode(good)}`, `${encode(p.name)}=${encode(bad)}`],
          })),
        ),
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
