import type { FastifyInstance } from 'fastify'
import { fail } from '../../errors.js'
import { isSuperAdmin } from '../../auth/principal.js'
import { defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../auth/routes.js'
import { securityMetrics, tenantMetrics } from './metrics.js'
import { routingOf } from './routing.js'
import { getJwtSecret, rotateJwtSecret } from './secrets.js'
import {
  assertTenantScope,
  createTenant,
  deleteTenant,
  getTenantDto,
  listTenants,
  updateTenant,
  updateTenantConfig,
} from './service.js'

/** Tenants module: management, configuration, signing secrets, metrics and database routing. */
export default async function tenantsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app

  defineRoute(app, 'listTenants', async (req) => {
    const q = req.query
    return listTenants(ctx, principalOf(req), { status: q.status }, q.limit ?? 20, q.offset ?? 0)
  })
  defineRoute(app, 'searchTenants', async (req) => {
    const q = req.query
    return listTenants(ctx, principalOf(req), { q: q.q }, q.limit ?? 20, q.offset ?? 0)
  })
  defineRoute(app, 'createTenant', async (req) => createTenant(ctx, principalOf(req), req.body))
  defineRoute(app, 'getMyTenant', async (req) => getTenantDto(ctx, userOf(req).tenantId))
  defineRoute(
    app,
    'getMyTenantConfig',
    async (req) => (await getTenantDto(ctx, userOf(req).tenantId)).auth_config,
  )
  defineRoute(app, 'getTenant', async (req) => {
    assertTenantScope(principalOf(req), req.params.id)
    return getTenantDto(ctx, req.params.id)
  })
  defineRoute(app, 'updateTenant', async (req) =>
    updateTenant(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'deleteTenant', async (req) => deleteTenant(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'updateTenantConfig', async (req) =>
    updateTenantConfig(ctx, principalOf(req), req.params.id, req.body),
  )

  defineRoute(app, 'getJwtSecret', async (req) => getJwtSecret(ctx, userOf(req).tenantId))
  defineRoute(app, 'generateJwtSecret', async (req) => rotateJwtSecret(ctx, userOf(req).tenantId, 'generate'))
  defineRoute(app, 'setJwtSecret', async (req) =>
    rotateJwtSecret(ctx, userOf(req).tenantId, 'set', req.body.secret),
  )
  defineRoute(app, 'clearJwtSecret', async (req) => rotateJwtSecret(ctx, userOf(req).tenantId, 'clear'))

  defineRoute(app, 'getTenantMetrics', async (req) => tenantMetrics(ctx, principalOf(req).tenantId))
  defineRoute(app, 'getSecurityMetrics', async (req) => securityMetrics(ctx, principalOf(req).tenantId))

  defineRoute(app, 'setTenantDatabase', async (req) => {
    const p = principalOf(req)
    const id = req.params.id
    // Contract 7: a tenant admin is FORBIDDEN for its own tenant and TENANT_NOT_FOUND for another.
    if (!p.isPlatform) fail(id === p.tenantId ? 'FORBIDDEN' : 'TENANT_NOT_FOUND')
    if (!isSuperAdmin(p) && id !== p.tenantId) fail('TENANT_NOT_FOUND')
    const tenant = (await ctx.tenants.byId(id)) ?? fail('TENANT_NOT_FOUND')
    // Why: bootstrap and the operators' own credentials read the platform tenant from the main database.
    if (tenant.isPlatform) fail('DATABASE_ROUTING_FAILED', 'The platform tenant stays in the main database')
    return routingOf(ctx).setDatabase(id, req.body.url)
  })
}
