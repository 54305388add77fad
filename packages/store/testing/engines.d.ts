import type { TestProjectInlineConfiguration } from 'vitest/config';

/** A database engine of the store, as the tests name it. */
export interface TestEngine {
  readonly kind: 'sqlite' | 'postgres';
  readonly name: 'SQLite' | 'PostgreSQL';
}
/** SQLite, which every run has. */
export declare const SQLITE: TestEngine;
/** PostgreSQL, on the test server (TEST_DATABASE_URL). */
export declare const POSTGRES: TestEngine;
/**
 * The engines of this run: SQLite always, PostgreSQL when reachable (always in CI, where an unreachable one
 * throws).
 */
export declare function testEngines(): Promise<TestEngine[]>;
/** The engine a suite of the vitest project runs on (TEST_STORE, set by `engineProjects`); SQLite without it. */
export declare function projectEngine(): TestEngine;
/** One vitest project per engine of `testEngines`, named after its kind; `include` narrows an engine's files. */
export declare function engineProjects(
  include?: (engine: TestEngine) => string[] | undefined,
): Promise<TestProjectInlineConfiguration[]>;
