// Plain JavaScript, like postgres-available.js: vitest configs load it natively, before any TypeScript loader.
import { postgresAvailable } from './postgres-available.js';

/** SQLite, which every run has. */
export const SQLITE = Object.freeze({ kind: 'sqlite', name: 'SQLite' });
/** PostgreSQL, on the test server (TEST_DATABASE_URL). */
export const POSTGRES = Object.freeze({ kind: 'postgres', name: 'PostgreSQL' });

/**
 * The engines every suite that runs on both runs on here: SQLite always, and PostgreSQL when its test server is
 * reachable. In CI it must be (`postgresAvailable` throws there), so no suite is left on one engine in CI.
 */
export async function testEngines() {
  return (await postgresAvailable()) ? [SQLITE, POSTGRES] : [SQLITE];
}

/** The engine a suite of the vitest project runs on: TEST_STORE, which `engineProjects` sets; SQLite without it. */
export function projectEngine() {
  return process.env.TEST_STORE === POSTGRES.kind ? POSTGRES : SQLITE;
}

/**
 * One vitest project per engine of `testEngines`, named after its kind (`sqlite`, `postgres`), whose tests learn their
 * engine from `projectEngine()`: for a package whose whole suite runs once per engine. `include(engine)` narrows an
 * engine's project to some test files.
 */
export async function engineProjects(include = () => undefined) {
  return (await testEngines()).map((engine) => {
    const files = include(engine);
    return {
      extends: true,
      test: { name: engine.kind, env: { TEST_STORE: engine.kind }, ...(files === undefined ? {} : { include: files }) },
    };
  });
}
