import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'
import cors from '@fastify/cors'

/** Helmet defaults, CORS only for configured origins, and no caching of any API response. */
async function securityHeadersPlugin(
  app: FastifyInstance,
  opts: { corsOrigins: readonly string[] },
): Promise<void> {
  // First, so even CORS preflights answered by @fastify/cors carry it.
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.startsWith('/api/')) reply.header('cache-control', 'no-store')
  })
  await app.register(helmet, { global: true })
  if (opts.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: [...opts.corsOrigins],
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      // Why: X-Client-Key is deliberately absent: keys stay on servers, never in browsers.
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
      exposedHeaders: [
        'X-Request-Id',
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ],
      maxAge: 600,
    })
  }
}

export default fp(securityHeadersPlugin, { name: 'security-headers' })
