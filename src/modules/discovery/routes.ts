import type { FastifyInstance } from 'fastify'
import { AppError } from '../../errors.js'
import { sendCacheable } from '../../lib/cacheable.js'
import { defineRawRoute } from '../../lib/route.js'
import type { AppContext } from '../../context.js'

// Issuer discovery and JWKS per tenant (openapi/paths/signing.yaml, docs/decisions.md D14). Read by
// standard libraries, so outside the envelope, and cacheable: registered with defineRawRoute, which takes
// everything from the route table as defineRoute does but leaves the answer to the handler.

/** The tenant's public keys (empty for HS256), from the keystore's memory. */
export async function getJwks(ctx: AppContext, tenantCode: string) {
  const tenant = await activeTenant(ctx, tenantCode)
  return { keys: await ctx.keystore.publicKeys(tenant.id) }
}

async function activeTenant(ctx: AppContext, code: string) {
  const tenant = await ctx.tenants.byCode(code)
  if (!tenant || tenant.status !== 'ACTIVE') throw new AppError('TENANT_NOT_FOUND')
  return tenant
}

/** Discovery module: each tenant's key set (its discovery document is the OpenID provider's, src/modules/oidc). */
export default async function discoveryRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRawRoute(app, 'getJwks', async (req, reply) => {
    const keys = await getJwks(ctx, req.params.tenantCode)
    return sendCacheable(req, reply, keys)
  })
}
