import type { FastifyInstance, FastifyReply } from 'fastify'
import { timingSafeEqualStr } from '../../lib/tokens.js'
import { defineRawRoute, defineRoute, type Req } from '../../lib/route.js'
import { getHealth, getHealthRoot } from './health.js'

/** System endpoints: health on both paths (load balancers probe /health), and the metrics. */
export default async function systemRoutes(app: FastifyInstance): Promise<void> {
  defineRoute(app, 'getHealth', async () => getHealth(app.ctx))
  defineRoute(app, 'getHealthRoot', async () => getHealthRoot(app.ctx))
  // Prometheus text, not the JSON envelope. Why the query is not validated: a scraper's is read by no one.
  defineRawRoute(app, 'getMetrics', async (req, reply) => getMetrics(app, req, reply), {
    validateQuery: false,
  })
}

/** The metrics plugin's registry as Prometheus text; when METRICS_TOKEN is set, only for its bearer. */
export async function getMetrics(
  app: FastifyInstance,
  req: Req<'getMetrics'>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const token = app.ctx.config.metricsToken
  if (token) {
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    if (!timingSafeEqualStr(given, token)) {
      return reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized\n')
    }
  }
  return reply.type('text/plain; version=0.0.4; charset=utf-8').send(await app.renderMetrics())
}
