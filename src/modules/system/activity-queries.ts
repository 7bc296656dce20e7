import { sql, type Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

// What the database says of its other clients (pg_stat_activity), for retention's pacing (pace.ts).

/**
 * Whether another client of this database ran a statement in the last second, or is in one now:
 * pg_stat_activity, read from shared memory, so it costs no table read. False where it cannot be read.
 */
export async function databaseBusy(db: Kysely<Database>): Promise<boolean> {
  try {
    const { rows } = await sql<{ busy: boolean }>`select exists (select 1 from pg_stat_activity a
      where a.datname = current_database() and a.backend_type = 'client backend'
        and a.pid <> pg_backend_pid()
        and (a.state <> 'idle' or a.state_change > clock_timestamp() - interval '1 second')) as busy`.execute(
      db,
    )
    return rows[0]?.busy === true
  } catch {
    return false
  }
}
