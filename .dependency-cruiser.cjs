/**
 * The import rules of the repository, checked by apps/server/test/unit/import-graph.test.ts over every package's
 * sources (apps/*\/src, packages/*\/src, and the spec package): no import cycle anywhere, and the server's layers
 * import one way (`main.ts` → `compose.ts` → `app.ts` → `http/` → `domain/`, `verification/` → the store).
 */
const SERVER = '^apps/server/src/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: modules that can only be understood, loaded and tested together.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'server-domain-not-http',
      comment: 'The domain and verification rules know nothing of HTTP: http/ calls them, never the other way.',
      severity: 'error',
      from: { path: `${SERVER}(domain|verification)/` },
      to: { path: `${SERVER}http/` },
    },
    {
      name: 'server-spec-readers-not-http',
      comment: 'The spec reader (spec/) and the metrics that use it stand beside http/, not on it.',
      severity: 'error',
      from: { path: `${SERVER}(spec|metrics)/` },
      to: { path: `${SERVER}http/` },
    },
    {
      name: 'server-nothing-below-app-imports-app',
      comment:
        'app.ts assembles the layers below it; only what builds or runs the app (main, compose, server) imports it.',
      severity: 'error',
      from: { path: `${SERVER}(http|domain|verification|health|metrics|rate-limits|spec)/` },
      to: { path: `${SERVER}(app|compose|main)\\.ts$` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|generated)/' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['types', 'import', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts'],
    },
  },
};
