import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { getSecurityMetrics, getTenantMetrics } from './metrics.js'
import { clearJwtSecret, generateJwtSecret, getJwtSecret, setJwtSecret } from './secrets.js'
import { getSigningKeys, rotateSigningKey } from './signing-keys.js'
import { getLoginBranding } from './branding.js'
import {
  createTenant,
  deleteTenant,
  getMyTenant,
  getMyTenantConfig,
  getTenant,
  listTenants,
  searchTenants,
  setTenantDatabase,
  updateTenant,
  updateTenantConfig,
} from './service.js'

/** Tenants module: management, configuration, signing secrets, metrics, database routing, and the sign-in page's branding. */
export default async function tenantsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app

  defineRoute(app, 'listTenants', async (req) => listTenants(ctx, principalOf(req), req.query))
  defineRoute(app, 'searchTenants', async (req) => searchTenants(ctx, principalOf(req), req.query))
  defineRoute(app, 'createTenant', async (req) => createTenant(ctx, principalOf(req), req.body))
  defineRoute(app, 'getMyTenant', async (req) => getMyTenant(ctx, userOf(req)))
  defineRoute(app, 'getMyTenantConfig', async (req) => getMyTenantConfig(ctx, userOf(req)))
  defineRoute(app, 'getTenant', async (req) => getTenant(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'updateTenant', async (req) =>
    updateTenant(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'deleteTenant', async (req) => deleteTenant(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'updateTenantConfig', async (req) =>
    updateTenantConfig(ctx, principalOf(req), req.params.id, req.body, requestMeta(req)),
  )

  defineRoute(app, 'getJwtSecret', async (req) => getJwtSecret(ctx, userOf(req).tenantId))
  defineRoute(app, 'generateJwtSecret', async (req) => generateJwtSecret(ctx, userOf(req).tenantId))
  defineRoute(app, 'setJwtSecret', async (req) => setJwtSecret(ctx, userOf(req).tenantId, req.body.secret))
  defineRoute(app, 'clearJwtSecret', async (req) => clearJwtSecret(ctx, userOf(req).tenantId))
  defineRoute(app, 'getSigningKeys', async (req) => getSigningKeys(ctx, userOf(req).tenantId))
  defineRoute(app, 'rotateSigningKey', async (req) => rotateSigningKey(ctx, userOf(req).tenantId))

  defineRoute(app, 'getTenantMetrics', async (req) => getTenantMetrics(ctx, principalOf(req).tenantId))
  defineRoute(app, 'getSecurityMetrics', async (req) => getSecurityMetrics(ctx, principalOf(req).tenantId))

  defineRoute(app, 'getLoginBranding', async (req) => getLoginBranding(ctx, req.query.tenantCode))

  defineRoute(app, 'setTenantDatabase', async (req) =>
    setTenantDatabase(ctx, principalOf(req), req.params.id, req.body.url),
  )
}
