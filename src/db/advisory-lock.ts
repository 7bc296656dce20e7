import { sql, type Kysely } from 'kysely'
import type { Database } from './database.js'

/** Takes a session-level advisory lock on this connection if it is free; false when another holds it. */
export async function tryAdvisoryLock(conn: Kysely<Database>, key: number): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${key}) as ok`.execute(conn)
  return rows[0]?.ok === true
}

/** Releases an advisory lock this connection holds. */
export async function advisoryUnlock(conn: Kysely<Database>, key: number): Promise<void> {
  await sql`select pg_advisory_unlock(${key})`.execute(conn)
}
