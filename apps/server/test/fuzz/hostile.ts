/**
 * Hostile forms that do not come from a schema: methods, paths, encodings, headers and bodies that clients and
 * attackers send. Every secret appears through its placeholder, so that each form is tried with real secrets.
 */
import { SECRET_PLACEHOLDERS } from './placeholders.js';

/** Methods the spec may not declare, in the forms Node's parser accepts and refuses. */
export const ODD_METHODS = [
  'GET',
  'POST',
  'HEAD',
  'OPTIONS',
  'DELETE',
  'PUT',
  'PATCH',
  'TRACE',
  'CONNECT',
  'PROPFIND',
  'SEARCH',
  'QUERY',
  'PURGE',
  'LINK',
  'M-SEARCH',
  'get',
  'post',
  'Get',
  'FOO',
  'GET\t',
] as const;

/** Request-line protocols: valid, old, future, malformed. */
export const ODD_PROTOCOLS = ['HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/9.9', ''] as const;

/** Percent-encodings that are not UTF-8, or not percent-encodings at all. */
export const BAD_PERCENT_ENCODINGS = [
  '%zz',
  '%',
  '%%',
  '%G0',
  '%C0%AF',
  '%FF',
  '%E0%A4%A',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%C3',
  '%u00e9',
] as const;

/** Percent-encodings that are valid but unusual: double encoding, encoded separators, lower-case hex. */
export const ODD_PERCENT_ENCODINGS = [
  '%2525',
  '%2F',
  '%2f',
  '%3F',
  '%23',
  '%26',
  '%3D',
  '%00',
  '%EF%BF%BF',
  '%c3%a9',
  '+',
] as const;

/** Query strings whose syntax is odd: empty pairs, names without values, brackets, separators. */
export const ODD_QUERY_SYNTAX = [
  '&',
  '&&',
  '=',
  '=1',
  'limit',
  'limit=',
  'limit[]=5',
  'limit[0]=5',
  'status[]=active',
  'a.b=1',
  'limit=5;status=active',
  'limit=5?limit=6',
  '__proto__=1',
  'constructor[prototype][x]=1',
  'hasOwnProperty=1',
  'LIMIT=5',
  'Limit=5',
  '%6C%69%6D%69%74=5',
  'lim%69t=5',
  'limit%00=5',
  'limit%20=5',
] as const;

/** Path segments that replace or follow a segment of a spec path. */
export const ODD_SEGMENTS = [
  '',
  '.',
  '..',
  '%2e',
  '%2E%2E',
  '%2F',
  'a%2Fb',
  '%00',
  'a;b=c',
  ';',
  '*',
  '\\',
  '%5C',
  'API_KEYS',
  'Api_Keys',
  'api_keys%20',
  'api%5Fkeys',
  'x'.repeat(300),
  'secret',
  'null',
  'undefined',
  '%E2%80%AE',
  ...SECRET_PLACEHOLDERS,
] as const;

/** Media types for a JSON body, from the exact one to wrong and malformed ones. */
export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset="utf-8"',
  'APPLICATION/JSON',
  'Application/Json; Charset=UTF-8',
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'application/json; charset=utf-16le',
  'application/json; charset=bogus',
  'application/json; charset=',
  'application/json;',
  'application/json; foo=bar',
  'application/json, text/plain',
  ' application/json',
  'application/json ',
  'application/jsonx',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/*',
  '*/*',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  '',
  'application',
  '/',
  ';charset=utf-8',
] as const;

/** `content-encoding` values: the one accepted (`identity`), compressions, lists and junk. */
export const CONTENT_ENCODINGS = [
  'identity',
  'IDENTITY',
  ' identity ',
  'gzip',
  'x-gzip',
  'deflate',
  'br',
  'zstd',
  'compress',
  'gzip, identity',
  'identity, gzip',
  'identity, identity',
  'chunked',
  '',
  '*',
  'utf-8',
] as const;

/** Values of the version header other than the supported one. */
export const ODD_VERSIONS = [
  '',
  ' ',
  '2023-06-02',
  '2023-6-1',
  '2023-06-01 ',
  '2023-06-01, 2023-06-01',
  '2023/06/01',
  '20230601',
  '2026-10-22',
  '9999-99-99',
  'latest',
  'v1',
  '1',
  '2023-06-01T00:00:00Z',
  '2023-06-01\u00a0',
  `\${jndi}`,
  'x'.repeat(2000),
  ...SECRET_PLACEHOLDERS,
] as const;

/** Values of the credential header that are not a valid admin key (or are one, padded). */
export const ODD_CREDENTIALS = [
  '',
  ' ',
  'null',
  'Bearer $ADMIN_KEY',
  '$ADMIN_KEY ',
  ' $ADMIN_KEY',
  '\t$ADMIN_KEY',
  '$ADMIN_KEYx',
  'x$ADMIN_KEY',
  '$ADMIN_KEY$ADMIN_KEY',
  '$ADMIN_KEY, $ADMIN_KEY',
  `sk-adm-${'A'.repeat(43)}`,
  `sk-api-${'B'.repeat(43)}`,
  'sk-adm-',
  'sk-adm-%00',
  `sk-adm-${'z'.repeat(4000)}`,
  '$KEY_ID',
  ...SECRET_PLACEHOLDERS,
] as const;

/** `Authorization` values: bearer tokens in odd forms, and other schemes. */
export const ODD_AUTHORIZATIONS = [
  '',
  'Bearer',
  'Bearer ',
  'bearer $ADMIN_KEY',
  'BEARER $ADMIN_KEY',
  'Bearer   $ADMIN_KEY',
  'Bearer\t$ADMIN_KEY',
  'Bearer $ADMIN_KEY extra',
  'Bearer "$ADMIN_KEY"',
  'Bearer $ADMIN_KEY,Bearer $ADMIN_KEY',
  'Bearer $VERIFIER_KEY',
  'Bearer $API_KEY_SECRET',
  'Token $ADMIN_KEY',
  'Basic $ADMIN_KEY',
  'Basic dXNlcjpwYXNzd29yZA==',
  '$ADMIN_KEY',
  'Bearer sk-adm-%00',
] as const;

/** Header names that are not the credential header, under which a secret may be sent by mistake. */
export const MISPLACED_SECRET_HEADERS = [
  'authorization',
  'api-key',
  'x-api-key-2',
  'x_api_key',
  'cookie',
  'x-forwarded-for',
  'referer',
  'request-id',
  'x-request-id',
] as const;

/** Headers that change how Node or a proxy reads a request: their effect is not predicted, only held to invariants. */
export const PROTOCOL_HEADERS: readonly [string, string][] = [
  ['expect', '100-continue'],
  ['expect', 'nothing'],
  ['connection', 'close'],
  ['connection', 'keep-alive'],
  ['connection', 'upgrade'],
  ['upgrade', 'websocket'],
  ['upgrade', 'h2c'],
  ['te', 'trailers'],
  ['transfer-encoding', 'identity'],
  ['transfer-encoding', 'gzip'],
  ['content-length', '0'],
  ['content-length', '-1'],
  ['content-length', 'abc'],
  ['content-length', '1, 2'],
  ['x-http-method-override', 'DELETE'],
  ['x-method-override', 'PATCH'],
  ['max-forwards', '0'],
  ['keep-alive', 'timeout=1'],
  ['proxy-connection', 'keep-alive'],
  ['http2-settings', 'AAMAAABkAARAAAAAAAIAAAAA'],
];

/** Headers a server must ignore, with usual and odd values. */
export const HARMLESS_HEADERS: readonly [string, string][] = [
  ['accept', 'text/html'],
  ['accept', 'application/xml'],
  ['accept', '*/*;q=0'],
  ['accept-encoding', 'gzip, br'],
  ['accept-language', 'de-CH'],
  ['accept-charset', 'latin1'],
  ['range', 'bytes=0-10'],
  ['if-none-match', '*'],
  ['if-modified-since', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ['cache-control', 'no-transform'],
  ['origin', 'https://evil.example'],
  ['user-agent', 'Mozilla/5.0 (fuzzer)'],
  ['x-stainless-lang', 'js'],
  ['anthropic-beta', 'x'],
  ['request-id', 'req_AAAAAAAAAAAAAAAAAAAAAAAA'],
  ['forwarded', 'for=127.0.0.1;proto=https'],
  ['x-forwarded-proto', 'https'],
  ['x-forwarded-host', 'evil.example'],
  ['via', '1.1 proxy'],
  ['dnt', '1'],
];
