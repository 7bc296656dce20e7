import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { changeMyPassword, resetUserPassword } from './passwords.js'
import {
  listMySessions,
  listUserSessions,
  revokeMyOtherSessions,
  revokeMySession,
  revokeUserSessions,
} from './session-management.js'
import { unlockUser } from './unlock.js'

/** Account lifecycle module: passwords, sessions and unlocking (openapi/paths/account.yaml). */
export default async function accountRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'changeMyPassword', async (req) =>
    changeMyPassword(ctx, userOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'resetUserPassword', async (req) =>
    resetUserPassword(ctx, principalOf(req), req.params.userId, req.body, requestMeta(req)),
  )
  defineRoute(app, 'listMySessions', async (req) => listMySessions(ctx, userOf(req)))
  defineRoute(app, 'revokeMySession', async (req) =>
    revokeMySession(ctx, userOf(req), req.params.sessionId, requestMeta(req)),
  )
  defineRoute(app, 'revokeMyOtherSessions', async (req) =>
    revokeMyOtherSessions(ctx, userOf(req), requestMeta(req)),
  )
  defineRoute(app, 'listUserSessions', async (req) =>
    listUserSessions(ctx, principalOf(req), req.params.userId),
  )
  defineRoute(app, 'revokeUserSessions', async (req) =>
    revokeUserSessions(ctx, principalOf(req), req.params.userId, requestMeta(req)),
  )
  defineRoute(app, 'unlockUser', async (req) =>
    unlockUser(ctx, principalOf(req), req.params.userId, requestMeta(req)),
  )
}
