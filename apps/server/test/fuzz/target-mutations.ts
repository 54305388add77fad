/** Hostile methods, paths, request-targets and protocols: what routing and Node's parser must take or refuse. */
import fc from 'fast-check';
import { type ArbitraryContext, type Draft, encode, type Mutation, mutation, utf8Bytes } from './drafts.js';
import { ODD_METHODS, ODD_PROTOCOLS, ODD_SEGMENTS } from './hostile.js';

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

/** Hostile methods, paths, request-targets and protocols for a request of any operation. */
export function methodAndPathMutations(context: ArbitraryContext): fc.Arbitrary<Mutation> {
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
