import type { Transaction } from 'kysely'
import type { Database, LoginMethod } from '../../db/database.js'
import { lockUserStatus } from '../users/queries.js'
import { activeSessionIds, insertRefreshToken, insertSession, revokeSessions } from './queries.js'
import { newSelectorToken } from './refresh-token.js'
import { uuidV7 } from '../../lib/tokens.js'

/**
 * Opens a session for a user, first revoking its oldest active sessions so that at most `max` stay
 * active. Locks the user row, so two concurrent logins of one user never exceed the limit, and a
 * deactivation that committed while the caller checked the password wins: returns null when the user
 * is no longer ACTIVE (or gone), and then nothing was written.
 * Lock order (the one every session writer follows): user row, session rows by id, refresh tokens.
 */
export async function openSession(
  trx: Transaction<Database>,
  s: {
    tenantId: string
    userId: string
    max: number
    now: Date
    expiresAt: Date
    ip: string | null
    userAgent: string | null
    loginMethod?: LoginMethod
  },
): Promise<{ sessionId: string; refreshToken: string } | null> {
  const user = await lockUserStatus(trx, s.tenantId, s.userId)
  if (user?.status !== 'ACTIVE') return null
  const active = await activeSessionIds(trx, s.tenantId, s.userId, s.now)
  const excess = active.length - (s.max - 1)
  if (excess > 0) {
    const oldest = active.slice(0, excess).map((r) => r.id)
    await revokeSessions(trx, s.tenantId, oldest, 'session_limit', s.now)
  }
  const sessionId = await insertSession(trx, s)
  const id = uuidV7(s.now.getTime())
  const refreshToken = newSelectorToken(s.tenantId, id)
  await insertRefreshToken(trx, {
    id,
    tenantId: s.tenantId,
    sessionId,
    value: refreshToken,
    now: s.now,
    expiresAt: s.expiresAt,
  })
  return { sessionId, refreshToken }
}
