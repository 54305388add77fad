import { MAX_REQUEST_BODY_BYTES } from '@apikeys/api-types';
import { HttpError } from './http-error.js';

/** An error raised by Express's JSON body parser (body-parser): a `type` such as `entity.too.large`, a status. */
interface BodyParserError {
  type: string;
  status: number;
  message: string;
}

export function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    error instanceof Error &&
    typeof (error as Partial<BodyParserError>).type === 'string' &&
    typeof (error as Partial<BodyParserError>).status === 'number'
  );
}

/** A byte count as people write it: `2 MiB`, `64 KiB`, `100 bytes`. */
function describeBytes(bytes: number): string {
  if (bytes % 1024 ** 2 === 0) {
    return `${bytes / 1024 ** 2} MiB`;
  }
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** The 413 of a body over the spec's limit (`x-max-request-body-bytes`). */
export function requestTooLarge(): HttpError {
  return HttpError.of('request_too_large', `request body is larger than ${describeBytes(MAX_REQUEST_BODY_BYTES)}`);
}

/** The 415 of a compressed body: the server reads bodies as sent, uncompressed. */
export function unsupportedEncoding(): HttpError {
  return new HttpError(415, 'invalid_request_error', 'content-encoding: send the body uncompressed (identity)');
}

/** Why a body in another charset than UTF-8 is refused. */
export const UTF8_ONLY = 'the request body must be application/json in UTF-8';

/** The 415 of a body that is not JSON. */
export function unsupportedMediaType(detail = 'the request body must be application/json'): HttpError {
  return new HttpError(415, 'invalid_request_error', `content-type: ${detail}`);
}

/** Translates a body parser error (a client's, below 500) into the API's words. */
export function fromBodyParserError(error: BodyParserError): HttpError {
  switch (error.type) {
    case 'entity.too.large':
      return requestTooLarge();
    case 'entity.parse.failed':
      return HttpError.of('invalid_request_error', 'body: malformed JSON; send a JSON object');
    case 'entity.not.utf8':
      return HttpError.of('invalid_request_error', 'body: must be UTF-8 encoded JSON');
    // Their messages repeat the header's value: the answer is the one the server gives such a header itself.
    case 'charset.unsupported':
      return unsupportedMediaType(UTF8_ONLY);
    case 'encoding.unsupported':
      return unsupportedEncoding();
    default:
      return new HttpError(error.status, 'invalid_request_error', `body: ${error.message}`);
  }
}
