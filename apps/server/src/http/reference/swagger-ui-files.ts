import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files of swagger-ui-dist that the reference page loads, read from the installed package. */
export interface SwaggerUiFiles {
  script: Buffer;
  stylesheet: Buffer;
  icon: Buffer;
}

/**
 * Reads swagger-ui-dist's bundle, stylesheet and icon from its package folder, resolved at run time (the production
 * bundle keeps the package external). Its `index.js` is not imported: that would load the 1.7 MB browser bundle into
 * the server.
 */
export function readSwaggerUiFiles(): SwaggerUiFiles {
  const folder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const read = (name: string) => readFileSync(join(folder, name));
  return {
    script: read('swagger-ui-bundle.js'),
    stylesheet: read('swagger-ui.css'),
    icon: read('favicon-32x32.png'),
  };
}
