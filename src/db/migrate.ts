import { Migrator, type Kysely } from 'kysely'
import type { Database } from './database.js'
import { migrations } from './migrations/index.js'

/**
 * Applies pending migrations and returns the names applied (empty when up to date). Kysely's migrator
 * takes an advisory lock on PostgreSQL, so instances starting together apply each migration once.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
