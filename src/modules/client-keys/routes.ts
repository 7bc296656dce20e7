import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf } from '../auth/routes.js'
import * as keys from './service.js'

/**
 * Client Keys module: scopes, listings, create/get/update/revoke/rotate, usage logs and stats. The
 * usage recording itself is the key-usage plugin, registered by buildApp before every route module.
 */
export default async function clientKeysRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listClientKeyScopes', async (req) => keys.listScopes(ctx, principalOf(req)))
  defineRoute(app, 'listTenantClientKeys', async (req) =>
    keys.listTenantKeys(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'listClientKeys', async (req) => keys.listAllKeys(ctx, principalOf(req), req.query))
  defineRoute(app, 'createClientKey', async (req) => keys.createKey(ctx, principalOf(req), req.body))
  defineRoute(app, 'getClientKey', async (req) => keys.getKey(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'updateClientKey', async (req) =>
    keys.updateKey(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'revokeClientKey', async (req) => keys.revokeKey(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'rotateClientKey', async (req) =>
    keys.rotateKey(ctx, principalOf(req), req.params.id, req.body?.gracePeriodSeconds ?? 0),
  )
  defineRoute(app, 'getClientKeyLogs', async (req) =>
    keys.keyLogs(ctx, principalOf(req), req.params.id, req.query.limit ?? 50, req.query.offset ?? 0),
  )
  defineRoute(app, 'getClientKeyStats', async (req) => keys.keyStats(ctx, principalOf(req), req.params.id))
}
