import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import type { Data } from '../../lib/route.js'
import { mailHealth } from '../email/health.js'

type Health = Data<'getHealth'>

/** Reads every component's status; the main database decides between 200 and 503. */
async function readHealth(ctx: AppContext): Promise<{ up: boolean; health: Health }> {
  const [latencyMs, routedDown] = await Promise.all([
    ctx.pingMain().catch(() => null),
    ctx.dbs.anyRoutedDown(),
  ])
  const pool = ctx.dbs.poolStats()
  const redis = ctx.redisStatus()
  const channel = ctx.channel.status()
  const up = latencyMs !== null
  const health: Health = {
    status:
      up &&
      redis !== 'down' &&
      !routedDown &&
      ctx.lockout.status() === 'up' &&
      ctx.secretBudget.status() === 'up' &&
      channel !== 'down'
        ? 'ok'
        : 'degraded',
    database: up ? { status: 'up', latencyMs } : { status: 'down', latencyMs: null },
    redis: { status: redis },
    changeChannel: { status: channel },
    routingPool: pool,
    uptimeSeconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
    version: ctx.version,
    mail: await mailHealth(ctx),
  }
  return { up, health }
}

/** GET /api/v1/health: component statuses; 503 SERVICE_UNAVAILABLE (same object) when the database is down. */
export async function getHealth(ctx: AppContext): Promise<Health> {
  const { up, health } = await readHealth(ctx)
  if (!up) throw new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', health)
  return health
}

/** GET /health: the same answer as getHealth, where load balancers probe. */
export function getHealthRoot(ctx: AppContext): Promise<Health> {
  return getHealth(ctx)
}
