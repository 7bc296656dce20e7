import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf } from '../../security/request-principal.js'
import { deleteUser, getUser, listUsers, updateUser } from './service.js'

/** Users module: list, get, PATCH and DELETE the users of the caller's tenant. */
export default async function usersRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listUsers', async (req) => listUsers(ctx, principalOf(req), req.query))
  defineRoute(app, 'getUser', async (req) => getUser(ctx, principalOf(req), req.params.userId))
  defineRoute(app, 'updateUser', async (req) =>
    updateUser(ctx, principalOf(req), req.params.userId, req.body, requestMeta(req)),
  )
  defineRoute(app, 'deleteUser', async (req) =>
    deleteUser(ctx, principalOf(req), req.params.userId, requestMeta(req)),
  )
}
