import type { OpenApiDocument } from '@apikeys/spec';
import * as OpenApiValidator from 'express-openapi-validator';

/**
 * express-openapi-validator configured as the API uses it: every request and every response is checked against
 * `document`. The benchmark's validator reference uses this same function, so both always run the same checks.
 */
export function validateWithSpec(document: OpenApiDocument): ReturnType<typeof OpenApiValidator.middleware> {
  return OpenApiValidator.middleware({
    // The validator mutates the document it is given; it gets its own copy.
    apiSpec: structuredClone(document) as never,
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: true,
    validateSecurity: false,
    // The spec takes no multipart bodies: no upload middleware on the path of every request.
    fileUploader: false,
    // Dereferenced schemas avoid the coercion of `$ref` enum parameters as arrays
    // (https://github.com/cdimascio/express-openapi-validator/issues/1119).
    $refParser: { mode: 'dereference' },
  });
}
