import { sql, type Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { LiveSession } from '../../security/lookups.js'

/**
 * Whether the user exists, and the login time (seconds since the epoch, as `auth_time` is minted) of the
 * session `sessionId` when it is live now: of this user, not revoked, not expired. One statement; the
 * recent-sign-in check reads it (contract section 26).
 */
export async function liveSessionLogin(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<LiveSession> {
  // Why a raw statement from users: a user deleted since its token was issued is told apart from a
  // session that is not live (the caller answers 404 where the operation declares it), in the same trip.
  const { rows } = await sql<{ login_at: string | number | null }>`
    select (select floor(extract(epoch from s.created_at))::bigint from sessions s
             where s.tenant_id = u.tenant_id and s.id = ${sessionId} and s.user_id = u.id
               and s.revoked_at is null and s.expires_at > ${now}) as login_at
      from users u where u.tenant_id = ${tenantId} and u.id = ${userId}`.execute(db)
  const row = rows[0]
  if (!row) return { userExists: false, loginAt: undefined }
  return { userExists: true, loginAt: row.login_at === null ? undefined : Number(row.login_at) }
}
