import type { FastifyInstance, FastifyReply } from 'fastify'
import { timingSafeEqualStr } from '../../lib/tokens.js'
import { routes } from '../../../generated/routes.js'
import { defineRoute } from '../../lib/route.js'
import { AppError } from '../../errors.js'
import type { Data } from '../../lib/route.js'

type Health = Data<'getHealth'>

/** Reads every component's status; the main database decides between 200 and 503. */
async function readHealth(app: FastifyInstance): Promise<{ up: boolean; health: Health }> {
  const { ctx } = app
  const [latencyMs, routedDown] = await Promise.all([
    ctx.pingMain().catch(() => null),
    ctx.dbs.anyRoutedDown(),
  ])
  const pool = ctx.dbs.poolStats()
  const redis = ctx.redisStatus()
  const up = latencyMs !== null
  const health: Health = {
    status: up && redis !== 'down' && !routedDown ? 'ok' : 'degraded',
    database: up ? { status: 'up', latencyMs } : { status: 'down', latencyMs: null },
    redis: { status: redis },
    routingPool: pool,
    uptimeSeconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
    version: ctx.version,
  }
  return { up, health }
}

async function health(app: FastifyInstance, reply: FastifyReply): Promise<Health> {
  const { up, health } = await readHealth(app)
  if (!up) throw new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', health)
  void reply
  return health
}

/** System endpoints: health on both paths (load balancers probe /health). */
export default async function systemRoutes(app: FastifyInstance): Promise<void> {
  defineRoute(app, 'getHealth', async (_req, reply) => health(app, reply))
  defineRoute(app, 'getHealthRoot', async (_req, reply) => health(app, reply))

  // Prometheus text, not the JSON envelope, so it is registered without defineRoute.
  const spec = routes.getMetrics
  app.route({
    method: spec.method,
    url: spec.url,
    config: { operationId: spec.operationId, spec },
    handler: async (req, reply) => {
      const token = app.ctx.config.metricsToken
      if (token) {
        const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
        if (!timingSafeEqualStr(given, token)) {
          return reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized\n')
        }
      }
      return reply.type('text/plain; version=0.0.4; charset=utf-8').send(app.renderMetrics())
    },
  })
}
