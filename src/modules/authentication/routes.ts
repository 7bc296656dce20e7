import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { login, refresh } from './login.js'
import { getMe, logout, register, validateToken } from './service.js'
import { getAuthLogStats, listAuthLogs } from './auth-logs.js'

/** Authentication module: login, refresh, logout, register, getMe, validateToken, listAuthLogs,
 * getAuthLogStats. */
export default async function authRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'login', async (req) => login(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'refresh', async (req) => refresh(ctx, req.body.refreshToken, requestMeta(req)))
  defineRoute(app, 'logout', async (req) => logout(ctx, userOf(req), req.body.refreshToken, requestMeta(req)))
  defineRoute(app, 'register', async (req) => register(ctx, principalOf(req), req.body, requestMeta(req)))
  defineRoute(app, 'getMe', async (req) => getMe(ctx, userOf(req)))
  defineRoute(app, 'validateToken', async (req) => validateToken(ctx, userOf(req)) as never)
  defineRoute(app, 'listAuthLogs', async (req) => listAuthLogs(ctx, principalOf(req), req.query))
  defineRoute(app, 'getAuthLogStats', async (req) => getAuthLogStats(ctx, principalOf(req), req.query))
}
