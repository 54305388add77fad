import type { RequestHandler } from 'express';
import type { VerifierClient } from '../src/index.js';

/** Lets a request through only with a valid API key in `x-api-key`; the key is then in `res.locals.apiKey`. */
export function requireApiKey(verifier: VerifierClient): RequestHandler {
  return async (req, res, next) => {
    const secret = req.get('x-api-key');
    const verdict = secret ? await verifier.keys.verify(secret).catch((error: Error) => error) : undefined;
    if (verdict instanceof Error) {
      // No verdict: the key service failed, or did not answer within 2 s (the client's default). Fail closed.
      res.status(503).set('retry-after', '1').json({ error: 'VERIFICATION_UNAVAILABLE' });
    } else if (verdict?.valid) {
      res.locals.apiKey = verdict.key;
      next();
    } else {
      res.status(401).json({ error: verdict?.code ?? 'MISSING_KEY' });
    }
  };
}
