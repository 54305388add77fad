/** The server the PostgreSQL tests use: TEST_DATABASE_URL, or the local default of the development machines. */
export declare const TEST_POSTGRES_URL: string;
/** Whether the PostgreSQL tests can run here; throws in CI when the server is unreachable. */
export declare function postgresAvailable(): Promise<boolean>;
