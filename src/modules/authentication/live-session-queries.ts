import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

/**
 * The login time (seconds since the epoch, as `auth_time` is minted) of a session that is live now: of this
 * user, not revoked, not expired. Undefined otherwise. The recent-sign-in check reads it (contract section 26).
 */
export async function liveSessionLogin(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select('created_at')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row ? Math.floor(new Date(row.created_at).getTime() / 1000) : undefined
}
