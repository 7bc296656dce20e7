// Sessions as the tests see them: a login's session with where and when it opened, and the rows of
// `sessions` and `refresh_tokens` straight from the database.
import type { FastifyInstance } from 'fastify'
import { sha256Hex } from '../../src/lib/tokens.js'
import { call } from './call.js'
import { freshIp, PASSWORD, sidOf, type UserFx } from './fixtures.js'

/** A session a login opened: its tokens, its id (`sid`), the address it came from and when (the app's clock). */
export interface Session {
  accessToken: string
  refreshToken: string
  sid: string
  ip: string
  at: number
}

/**
 * Logs a fixture user in (the fixture password) from `ip`, a fresh address unless given, with the
 * `User-Agent` `userAgent` when given; throws unless 200.
 */
export async function openSession(
  app: FastifyInstance,
  user: UserFx,
  opts: { userAgent?: string; ip?: string } = {},
): Promise<Session> {
  const { userAgent, ip = freshIp() } = opts
  const res = await call(
    app,
    'login',
    { ip, headers: userAgent === undefined ? {} : { 'user-agent': userAgent } },
    { body: { tenantCode: user.tenant.code, identifier: user.email, password: PASSWORD } },
  )
  if (res.status !== 200) throw new Error(`login failed: ${res.raw}`)
  return { ...res.data, sid: sidOf(res.data.accessToken), ip, at: app.ctx.clock.now() }
}

/** A session row by its id. */
export function sessionRow(app: FastifyInstance, tenantId: string, sid: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('sessions')
    .select(['id', 'revoked_at', 'revoked_reason', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', sid)
    .executeTakeFirstOrThrow()
}

/** The session row a refresh token (any of the session's, rotated or not) belongs to. */
export function sessionOfToken(app: FastifyInstance, tenantId: string, refreshToken: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('sessions')
    .innerJoin('refresh_tokens', 'refresh_tokens.session_id', 'sessions.id')
    .select(['sessions.id', 'sessions.revoked_at', 'sessions.revoked_reason'])
    .where('refresh_tokens.tenant_id', '=', tenantId)
    .where('refresh_tokens.token_hash', '=', sha256Hex(refreshToken))
    .executeTakeFirstOrThrow()
}

/** Every session row of the user, revoked or not. */
export function sessionsOf(app: FastifyInstance, user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('sessions')
    .select(['id', 'revoked_at', 'revoked_reason'])
    .where('tenant_id', '=', user.tenant.id)
    .where('user_id', '=', user.id)
    .execute()
}

/** The refresh token rows of the user's sessions, in every state. */
export function refreshTokenRows(app: FastifyInstance, user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select(['refresh_tokens.id', 'refresh_tokens.session_id', 'refresh_tokens.revoked_at'])
    .where('refresh_tokens.tenant_id', '=', user.tenant.id)
    .where('sessions.user_id', '=', user.id)
    .execute()
}

/** The refresh tokens of a session that are not revoked. */
export function liveTokensOf(app: FastifyInstance, tenantId: string, sessionId: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('refresh_tokens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute()
}
