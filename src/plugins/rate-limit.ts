import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { AppError } from '../errors.js'
import { normalizeIp } from '../lib/cidr.js'

export type Bucket = 'global' | 'login'

interface Outcome {
  isAllowed: boolean
  max?: number
  remaining?: number
  ttlInSeconds?: number
  isExceeded?: boolean
}
type Check = (req: FastifyRequest) => Promise<Outcome>

const WINDOW_MS = 60_000
export const DEFAULT_BUDGET: Record<Bucket, number> = { global: 100, login: 5 }

declare module 'fastify' {
  interface FastifyRequest {
    rateLimitMax?: number
    rateLimitBucket?: Bucket
  }
  interface FastifyInstance {
    /** Counts one request against its per-IP bucket; throws RATE_LIMIT_EXCEEDED (429) when over. */
    checkRateLimit(req: FastifyRequest, reply: FastifyReply, bucket: Bucket, max: number): Promise<void>
  }
}

/** Builds the two per-IP limiters (global and login) on one store; keys are `<bucket>:<ip>`. */
async function limiters(app: FastifyInstance, opts: object): Promise<Record<Bucket, Check>> {
  const out = {} as Record<Bucket, Check>
  // Why: an encapsulated child, so a second store (local fall-back next to Redis) gets its own decorators.
  await app.register(async (child) => {
    await child.register(rateLimit, { global: false, ...opts })
    for (const bucket of ['global', 'login'] as const) {
      const check = child.createRateLimit({
        timeWindow: WINDOW_MS,
        max: (req: FastifyRequest) => req.rateLimitMax ?? DEFAULT_BUDGET[bucket],
        keyGenerator: (req: FastifyRequest) => `${bucket}:${normalizeIp(req.ip)}`,
      })
      out[bucket] = check as unknown as Check
    }
  })
  return out
}

/**
 * Per-IP budgets with @fastify/rate-limit: shared through Redis when REDIS_URL is set, falling back to
 * this instance's own counters whenever Redis does not answer (requests are never refused for it).
 */
async function rateLimitPlugin(
  app: FastifyInstance,
  opts: { redisUrl?: string; namespace?: string },
): Promise<void> {
  const local = await limiters(app, {})
  let shared: Record<Bucket, Check> | null = null
  let redis: Redis | null = null
  if (opts.redisUrl) {
    // Why lazy: ioredis is only loaded where counters are shared.
    const { Redis: RedisClient } = await import('ioredis')
    redis = new RedisClient(opts.redisUrl, {
      // Why: with no offline queue a command fails at once while Redis is down, so we fall back fast.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: 500,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    })
    redis.on('error', () => {
      // Why: connection errors are expected while Redis is down; health reports it, the log would flood.
    })
    shared = await limiters(app, { redis, nameSpace: opts.namespace ?? 'tessera-rl:' })
    const r = redis
    app.ctx.redisStatus = () => (r.status === 'ready' ? 'up' : 'down')
    app.addHook('onClose', async () => {
      r.disconnect()
    })
  }

  app.decorate(
    'checkRateLimit',
    async (req: FastifyRequest, reply: FastifyReply, bucket: Bucket, max: number) => {
      req.rateLimitMax = max
      let res: Outcome
      try {
        res = shared && redis?.status === 'ready' ? await shared[bucket](req) : await local[bucket](req)
      } catch {
        res = await local[bucket](req)
      }
      if (res.isAllowed || res.max === undefined) return
      reply.header('x-ratelimit-limit', res.max)
      reply.header('x-ratelimit-remaining', res.remaining ?? 0)
      reply.header('x-ratelimit-reset', res.ttlInSeconds ?? 0)
      if (res.isExceeded) {
        reply.header('retry-after', Math.max(1, res.ttlInSeconds ?? 1))
        throw new AppError('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded')
      }
    },
  )
}

export default fp(rateLimitPlugin, { name: 'rate-limit' })
