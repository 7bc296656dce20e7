import type { FastifyInstance, FastifyRequest } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { AppError } from '../../errors.js'
import { parseSince } from '../../lib/duration.js'
import type { Principal, UserPrincipal } from '../../auth/principal.js'
import { requestMeta } from '../audit/write.js'
import { listAuditRows } from '../audit/queries.js'
import { login, refresh } from './login.js'
import { logout, me, register, validate } from './account.js'

/** The gate sets the principal on every non-public route; this narrows it for the handler. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new AppError('UNAUTHORIZED')
  return req.principal
}

/** A JWT-only route's principal (the gate already refused Client Keys there). */
export function userOf(req: FastifyRequest): UserPrincipal {
  const p = principalOf(req)
  if (p.kind !== 'user') throw new AppError('UNAUTHORIZED', 'This endpoint requires a user access token')
  return p
}

/** Authentication module: login, refresh, logout, register, me, validate, auth-logs. */
export default async function authRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'login', async (req) => login(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'refresh', async (req) => refresh(ctx, req.body.refreshToken, requestMeta(req)))
  defineRoute(app, 'logout', async (req) => logout(ctx, userOf(req), req.body.refreshToken, requestMeta(req)))
  defineRoute(app, 'register', async (req) => register(ctx, principalOf(req), req.body, requestMeta(req)))
  defineRoute(app, 'getMe', async (req) => me(ctx, userOf(req)))
  defineRoute(app, 'validateToken', async (req) => validate(ctx, userOf(req)) as never)
  defineRoute(app, 'listAuthLogs', async (req) => {
    const p = principalOf(req)
    const q = req.query
    const sinceMs = q.since ? parseSince(q.since) : null
    return listAuditRows(
      ctx.dbs.forTenant(p.tenantId),
      p.tenantId,
      {
        action: q.action,
        success: q.success,
        since: sinceMs === null ? undefined : new Date(ctx.clock.now() - sinceMs),
        userId: q.userId,
        ip: q.ip,
      },
      q.limit ?? 50,
      q.offset ?? 0,
    )
  })
}
