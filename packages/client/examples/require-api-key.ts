import type { RequestHandler } from 'express';
import type { VerifierClient } from '../src/index.js';

/** Lets a request through only with a valid API key in `x-api-key`; the key is then in `res.locals.apiKey`. */
export function requireApiKey(verifier: VerifierClient): RequestHandler {
  return async (req, res, next) => {
    const secret = req.get('x-api-key');
    try {
      const verdict = secret ? await verifier.keys.verify(secret) : undefined;
      if (verdict?.valid) {
        res.locals.apiKey = verdict.key;
        next();
      } else {
        res.status(401).json({ error: verdict?.code ?? 'MISSING_KEY' });
      }
    } catch (error) {
      next(error); // the key service did not answer: fail closed
    }
  };
}
