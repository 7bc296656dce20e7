import type { FastifyInstance } from 'fastify'
import { timingSafeEqualStr } from '../../lib/tokens.js'
import { routes } from '../../../generated/routes.js'
import { defineRoute } from '../../lib/route.js'
import { getHealth, getHealthRoot } from './health.js'

/** System endpoints: health on both paths (load balancers probe /health). */
export default async function systemRoutes(app: FastifyInstance): Promise<void> {
  defineRoute(app, 'getHealth', async () => getHealth(app.ctx))
  defineRoute(app, 'getHealthRoot', async () => getHealthRoot(app.ctx))

  // Prometheus text, not the JSON envelope, so it is registered without defineRoute.
  const spec = routes.getMetrics
  app.route({
    method: spec.method,
    url: spec.url,
    config: { operationId: spec.operationId, spec },
    handler: async function getMetrics(req, reply) {
      const token = app.ctx.config.metricsToken
      if (token) {
        const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
        if (!timingSafeEqualStr(given, token)) {
          return reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized\n')
        }
      }
      return reply.type('text/plain; version=0.0.4; charset=utf-8').send(await app.renderMetrics())
    },
  })
}
