import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import * as providers from './service.js'

/** Identity providers module: the other providers a tenant's people sign in with (contract section 24). */
export default async function identityProvidersRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listIdentityProviders', async (req) =>
    providers.listIdentityProviders(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'createIdentityProvider', async (req) =>
    providers.createIdentityProvider(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'getIdentityProvider', async (req) =>
    providers.getIdentityProvider(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'updateIdentityProvider', async (req) =>
    providers.updateIdentityProvider(ctx, principalOf(req), req.params.id, req.body, requestMeta(req)),
  )
  defineRoute(app, 'deleteIdentityProvider', async (req) =>
    providers.deleteIdentityProvider(ctx, principalOf(req), req.params.id, requestMeta(req)),
  )
  defineRoute(app, 'listLoginProviders', async (req) =>
    providers.listLoginProviders(ctx, req.query.tenantCode),
  )
}
