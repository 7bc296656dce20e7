import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import * as clients from './service.js'

/** Applications module: the OAuth clients of the tenant's OpenID provider (contract section 23). */
export default async function oauthClientsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listOAuthClients', async (req) =>
    clients.listOAuthClients(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'createOAuthClient', async (req) =>
    clients.createOAuthClient(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'getOAuthClient', async (req) =>
    clients.getOAuthClient(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'updateOAuthClient', async (req) =>
    clients.updateOAuthClient(ctx, principalOf(req), req.params.id, req.body, requestMeta(req)),
  )
  defineRoute(app, 'deleteOAuthClient', async (req) =>
    clients.deleteOAuthClient(ctx, principalOf(req), req.params.id, requestMeta(req)),
  )
  defineRoute(app, 'rotateOAuthClientSecret', async (req) =>
    clients.rotateOAuthClientSecret(ctx, principalOf(req), req.params.id, req.body, requestMeta(req)),
  )
}
