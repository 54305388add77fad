import { type Kysely, Migrator } from 'kysely';
import { migrationProvider } from '../migrations/index.js';
import type { DatabaseSchema } from '../schema.js';
import type { SchemaMigrator } from '../types.js';

/** Runs the migrations of `migrations/` on a Kysely instance. */
export class KyselyMigrator implements SchemaMigrator {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async migrateToLatest(): Promise<string[]> {
    const { error, results } = await new Migrator({ db: this.db, provider: migrationProvider }).migrateToLatest();
    if (error) {
      throw new Error('database migration failed', { cause: error });
    }
    return (results ?? []).map((result) => result.migrationName);
  }
}
