import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import type { Database } from './database.js'
import { migrations } from './migrations/index.js'

// Why our own table names: a routed tenant database may be shared with another Kysely application.
export const MIGRATION_TABLE = 'tessera_migrations'
export const MIGRATION_LOCK_TABLE = 'tessera_migrations_lock'

/** Thrown when a migration fails; `cause` is the database error (its SQLSTATE code is kept there). */
export class MigrationError extends Error {
  constructor(
    readonly migrationName: string | undefined,
    cause: unknown,
  ) {
    super(
      `migration ${migrationName ?? '(setup)'} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    )
    this.name = 'MigrationError'
  }
}

/**
 * Applies every pending migration in one transaction and returns their names (empty when up to date).
 * On PostgreSQL, Kysely's migrator holds a session advisory lock around the run, so instances starting
 * together apply each migration once; the later ones wait, then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = results.find((r: MigrationResult) => r.status === 'Error')?.migrationName
    throw new MigrationError(failed, error)
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
