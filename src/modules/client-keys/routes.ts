import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf } from '../../security/request-principal.js'
import * as keys from './service.js'
import * as usage from './usage.js'

/**
 * Client Keys module: scopes, listings, create/get/update/revoke/rotate, usage logs and stats. The
 * usage recording itself is the key-usage plugin, registered by buildApp before every route module.
 */
export default async function clientKeysRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listClientKeyScopes', async (req) => keys.listClientKeyScopes(ctx, principalOf(req)))
  defineRoute(app, 'listTenantClientKeys', async (req) =>
    keys.listTenantClientKeys(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'listClientKeys', async (req) => keys.listClientKeys(ctx, principalOf(req), req.query))
  defineRoute(app, 'createClientKey', async (req) => keys.createClientKey(ctx, principalOf(req), req.body))
  defineRoute(app, 'getClientKey', async (req) => keys.getClientKey(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'updateClientKey', async (req) =>
    keys.updateClientKey(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'revokeClientKey', async (req) =>
    keys.revokeClientKey(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'rotateClientKey', async (req) =>
    keys.rotateClientKey(ctx, principalOf(req), req.params.id, req.body?.gracePeriodSeconds ?? 0),
  )
  defineRoute(app, 'getClientKeyLogs', async (req) =>
    usage.getClientKeyLogs(ctx, principalOf(req), req.params.id, req.query),
  )
  defineRoute(app, 'getClientKeyStats', async (req) =>
    usage.getClientKeyStats(ctx, principalOf(req), req.params.id),
  )
}
