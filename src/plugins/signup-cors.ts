import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { routes } from '../../generated/routes.js'
import type { RouteSpec } from '../lib/route-spec.js'

// CORS of the two sign-up operations (contract section 20): a page on one of a publishable key's
// `allowedOrigins` calls them from the browser, whatever CORS_ORIGINS says (@fastify/cors is switched off
// on them: src/lib/route.ts). A preflight carries no header values, so it cannot name its key: it is
// answered for an origin that some active key allows, and the request itself is then held to its own
// key's list by the gate (403 ORIGIN_NOT_ALLOWED). Every answer here depends on Origin: `Vary: Origin`.

const ALLOWED_HEADERS = 'X-Publishable-Key, Content-Type'
const EXPOSED_HEADERS =
  'X-Request-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset'

const signupRoutes = (Object.values(routes) as RouteSpec[]).filter((r) => r.auth === 'publishable-key')

/** Whether the request's Origin may read this answer: its own key's list, or (no key) any active key's. */
async function allowedOrigin(app: FastifyInstance, req: FastifyRequest): Promise<string | null> {
  const origin = req.headers.origin
  if (typeof origin !== 'string') return null
  return (await app.ctx.publishableKeys.originAllowed(origin, req.headers['x-publishable-key']))
    ? origin
    : null
}

function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin)
  reply.header('access-control-expose-headers', EXPOSED_HEADERS)
}

async function signupCorsPlugin(app: FastifyInstance): Promise<void> {
  const corsHeaders = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('vary', 'Origin')
    // Why a failure is let through: the gate asks the same store next and answers for it (503).
    const origin = await allowedOrigin(app, req).catch(() => null)
    if (origin) allowOrigin(reply, origin)
  }
  // Why a route-level hook, attached as the two operations are defined: no other route pays for it.
  app.addHook('onRoute', (route) => {
    if ((route.config as { spec?: RouteSpec } | undefined)?.spec?.auth !== 'publishable-key') return
    const own = route.onRequest
    route.onRequest = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), corsHeaders]
  })

  for (const spec of signupRoutes) {
    app.route({
      method: 'OPTIONS',
      url: spec.url,
      config: { cors: false },
      handler: async (req, reply) => {
        reply.header('vary', 'Origin')
        const origin = await allowedOrigin(app, req)
        if (!origin) {
          return reply.code(403).send({
            success: false,
            error: 'Origin not allowed for any publishable key',
            code: 'ORIGIN_NOT_ALLOWED',
          })
        }
        allowOrigin(reply, origin)
        reply.header('access-control-allow-methods', spec.method)
        reply.header('access-control-allow-headers', ALLOWED_HEADERS)
        reply.header('access-control-max-age', '600')
        return reply.code(204).send()
      },
    })
  }
}

export default fp(signupCorsPlugin, { name: 'signup-cors', dependencies: ['security-headers'] })
