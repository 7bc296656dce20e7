import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../errors.js'
import { defineRawRoute } from '../../lib/route.js'
import type { AppContext } from '../../context.js'

// Issuer discovery and JWKS per tenant (openapi/paths/signing.yaml, docs/decisions.md D14). Read by
// standard libraries, so outside the envelope, and cacheable: registered with defineRawRoute, which takes
// everything from the route table as defineRoute does but leaves the answer to the handler.

/** The issuer discovery document of an ACTIVE tenant; TENANT_NOT_FOUND otherwise. */
export async function getOpenIdConfiguration(ctx: AppContext, tenantCode: string) {
  const tenant = await activeTenant(ctx, tenantCode)
  const issuer = ctx.keystore.issuer(tenant.code)
  return { issuer, jwks_uri: `${issuer}/.well-known/jwks.json` }
}

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

/** Sends a cacheable JSON document with a strong ETag, or 304 when the client's validator matches. */
function sendCacheable(req: FastifyRequest, reply: FastifyReply, body: object) {
  const etag = `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}"`
  reply.header('cache-control', 'public, max-age=300').header('etag', etag)
  const given = req.headers['if-none-match']
  if (typeof given === 'string' && given.split(',').some((v) => v.trim().replace(/^W\//, '') === etag)) {
    return reply.code(304).send()
  }
  return reply.code(200).send(body)
}

/** Discovery module: the two well-known documents of each tenant. */
export default async function discoveryRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRawRoute(app, 'getOpenIdConfiguration', async (req, reply) =>
    sendCacheable(req, reply, await getOpenIdConfiguration(ctx, req.params.tenantCode)),
  )
  defineRawRoute(app, 'getJwks', async (req, reply) =>
    sendCacheable(req, reply, await getJwks(ctx, req.params.tenantCode)),
  )
}
