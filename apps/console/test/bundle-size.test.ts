import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

// The budget of issue 17: the production JavaScript, gzipped, at most 200 KB. turbo builds the console before its
// tests (`@apikeys/console#test` depends on its `build`), so this reads what the server would serve.
const BUDGET_BYTES = 200 * 1024;
const ASSETS = fileURLToPath(new URL('../dist/assets/', import.meta.url));

/** The gzipped size of each JavaScript file of the build, at gzip's default level, as most servers send them. */
function gzippedScripts(): Record<string, number> {
  return Object.fromEntries(
    readdirSync(ASSETS)
      .filter((name) => name.endsWith('.js'))
      .map((name) => [name, gzipSync(readFileSync(join(ASSETS, name))).length]),
  );
}

describe('the production build', () => {
  it('ships at most 200 KB of JavaScript, gzipped', async ({ annotate }) => {
    const sizes = gzippedScripts();
    const total = Object.values(sizes).reduce((sum, size) => sum + size, 0);
    await annotate(`${(total / 1024).toFixed(1)} KB gzipped: ${JSON.stringify(sizes)}`);

    expect(Object.keys(sizes).length).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('has no source map and no inline script in its page', () => {
    const page = readFileSync(fileURLToPath(new URL('../dist/index.html', import.meta.url)), 'utf8');

    expect(readdirSync(ASSETS).filter((name) => name.endsWith('.map'))).toEqual([]);
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
