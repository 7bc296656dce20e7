import { tdb, type AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import type { Principal, UserPrincipal } from '../../security/principal.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import {
  countActive,
  endUserSessions,
  findActiveSession,
  listActiveSessions,
  revokeSessions,
} from '../sessions/queries.js'
import { findUserById, lockUser } from '../users/queries.js'

type SessionRow = Awaited<ReturnType<typeof listActiveSessions>>[number]

const iso = (d: Date | string) => new Date(d).toISOString()

/** A session as the API shows it (`Session`, openapi/components/account.yaml). */
function toSessionDto(s: SessionRow) {
  return {
    id: s.id,
    createdAt: iso(s.created_at),
    lastUsedAt: iso(s.last_used_at),
    expiresAt: iso(s.expires_at),
    ip: s.ip,
    userAgent: s.user_agent,
  }
}

/** GET /me/sessions: the caller's active sessions, newest first; `current` marks the calling one. */
export async function listMySessions(ctx: AppContext, actor: UserPrincipal) {
  const now = new Date(ctx.clock.now())
  const rows = await listActiveSessions(tdb(ctx, actor), actor.tenantId, actor.userId, now)
  return { items: rows.map((s) => ({ ...toSessionDto(s), current: s.id === actor.sessionId })) }
}

/**
 * DELETE /me/sessions/:sessionId: revokes one active session of the caller with its refresh tokens.
 * Another user's or tenant's session is SESSION_NOT_FOUND, like an unknown one. One SESSIONS_REVOKED row.
 */
export async function revokeMySession(
  ctx: AppContext,
  actor: UserPrincipal,
  sessionId: string,
  meta: RequestMeta,
) {
  const { tenantId, userId } = actor
  const now = new Date(ctx.clock.now())
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'SESSIONS_REVOKED', actor, meta, note: { userId, metadata: {} } },
    {
      act: async (trx, note) => {
        const mine = await findActiveSession(trx, { tenantId, userId, sessionId, now })
        if (!mine) fail('SESSION_NOT_FOUND')
        // Why check again: a refresh or logout may have ended it between the read and the lock.
        const ended = await revokeSessions(trx, tenantId, [sessionId], 'revoked_by_user', now)
        if (countActive(ended, now) === 0) fail('SESSION_NOT_FOUND')
        note.metadata.sessionsRevoked = 1
        return { revoked: true as const }
      },
    },
  )
}

/** POST /me/sessions/revoke-others: revokes every active session of the caller but the calling one. */
export async function revokeMyOtherSessions(ctx: AppContext, actor: UserPrincipal, meta: RequestMeta) {
  const { tenantId, userId } = actor
  const now = new Date(ctx.clock.now())
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'SESSIONS_REVOKED', actor, meta, note: { userId, metadata: {} } },
    {
      act: async (trx, note) => {
        // Why the user row first: a login racing this call waits, so its new session is never left active
        // with its refresh token revoked by the second statement of endUserSessions. A deleted user has
        // nothing to revoke: 0.
        await lockUser(trx, tenantId, userId)
        const ended = await endUserSessions(trx, tenantId, userId, 'revoked_by_user', now, actor.sessionId)
        const revoked = countActive(ended, now)
        note.metadata.sessionsRevoked = revoked
        return { revoked }
      },
    },
  )
}

/** GET /users/:userId/sessions: a user's active sessions, newest first. Hierarchy rule applies. */
export async function listUserSessions(ctx: AppContext, actor: Principal, userId: string) {
  const { tenantId } = actor
  const db = tdb(ctx, actor)
  if (!(await findUserById(db, tenantId, userId))) fail('USER_NOT_FOUND')
  await assertMayActOnUser(db, actor, { tenantId, userId, isPlatform: actor.isPlatform })
  const rows = await listActiveSessions(db, tenantId, userId, new Date(ctx.clock.now()))
  return { items: rows.map(toSessionDto) }
}

/** DELETE /users/:userId/sessions: revokes every active session of a user. Hierarchy rule applies. */
export async function revokeUserSessions(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  meta: RequestMeta,
) {
  const { tenantId } = actor
  const now = new Date(ctx.clock.now())
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'SESSIONS_REVOKED', actor, meta, note: { userId: null, metadata: {} } },
    {
      act: async (trx, note) => {
        // Why the user row first: the lock order every session writer follows (see sessions/queries.ts).
        if (!(await lockUser(trx, tenantId, userId))) fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(trx, actor, { tenantId, userId, isPlatform: actor.isPlatform })
        const revoked = countActive(
          await endUserSessions(trx, tenantId, userId, 'revoked_by_admin', now),
          now,
        )
        note.metadata.sessionsRevoked = revoked
        return { revoked }
      },
    },
  )
}
