import type { ApiVersion } from '@apikeys/api-types';
import { quotable } from '@apikeys/permissions';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './errors/http-error.js';

const VERSION_HEADER = 'vendor-version';
// An existing third-party SDK for this API sends its version under this name.
const VERSION_HEADER_ALIAS = 'anthropic-version';

/**
 * Requires a supported `vendor-version` (or its alias `anthropic-version`) and records it for the rest of the request
 * (`apiVersionOf`). It runs before the spec validator so the errors can name the value sent and the supported
 * versions; the alias is copied to `vendor-version` so the validator sees the header the spec declares.
 */
export function requireApiVersion(supportedVersions: readonly ApiVersion[]) {
  const supported = supportedVersions.join(', ');
  return (req: Request, res: Response, next: NextFunction): void => {
    let version = req.headers[VERSION_HEADER];
    const alias = req.headers[VERSION_HEADER_ALIAS];
    if ((version === undefined || version === '') && typeof alias === 'string' && alias !== '') {
      version = alias;
      req.headers[VERSION_HEADER] = alias;
    }
    if (version === undefined || version === '') {
      next(HttpError.of('invalid_request_error', `${VERSION_HEADER}: header is required`));
      return;
    }
    if (typeof version !== 'string' || !supportedVersions.includes(version as ApiVersion)) {
      // Only a value that looks like a version is repeated: a secret sent here by mistake never comes back.
      const sent =
        typeof version === 'string' && quotable(version, 'date')
          ? `version ${JSON.stringify(version)}`
          : 'value (not a date like YYYY-MM-DD)';
      next(
        HttpError.of(
          'invalid_request_error',
          `${VERSION_HEADER}: unsupported ${sent}; supported versions: ${supported}`,
        ),
      );
      return;
    }
    res.locals.apiVersion = version;
    next();
  };
}

/** The API version of the request; undefined for the probes, which take none. */
export function apiVersionOf(res: Response): ApiVersion | undefined {
  return res.locals.apiVersion as ApiVersion | undefined;
}
