import cluster from 'node:cluster'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { AppError } from '../errors.js'
import { rateLimitSubject } from '../lib/cidr.js'
import { ClusterWindowClient } from '../lib/cluster-window-store.js'
import { WindowCounterStore, type WindowHit } from '../lib/rate-limit-store.js'
import { connectRedis } from '../lib/redis.js'
import type { RouteSpec } from '../lib/route-spec.js'

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

/**
 * The per-IP budget a route's requests count against: `login` for a route with a budget of its own
 * (`x-rate-limit`), none for a route the document exempts (`x-rate-limit: false`: GET /health, which
 * balancers probe from one address), `global` for every other (unknown URLs included).
 */
export function bucketOf(spec: RouteSpec | undefined): Bucket | null {
  if (spec?.rateLimit === false) return null
  return spec?.rateLimit ? 'login' : 'global'
}
/** Longest wait for one Redis command (docs/decisions.md D6); past it the local counters take over. */
export const REDIS_COMMAND_TIMEOUT_MS = 100
/** How often a Redis that stopped answering is asked again. */
const REDIS_PROBE_INTERVAL_MS = 500
/** Unanswered probes after which the connection is replaced (it may be half-open: replies never come). */
const REDIS_PROBES_BEFORE_RECONNECT = 6

declare module 'fastify' {
  interface FastifyRequest {
    rateLimitMax?: number
  }
  interface FastifyInstance {
    /** Counts one request against its per-IP bucket; throws RATE_LIMIT_EXCEEDED (429) when over. */
    checkRateLimit(req: FastifyRequest, reply: FastifyReply, bucket: Bucket, max: number): Promise<void>
  }
}

/**
 * Builds the two shared limiters (global and login) on Redis; keys are `<bucket>:<subject>`, the subject
 * being the IPv4 address or the IPv6 /64 (rateLimitSubject).
 */
async function sharedLimiters(app: FastifyInstance, opts: object): Promise<Record<Bucket, Check>> {
  const out = {} as Record<Bucket, Check>
  // Why: an encapsulated child, so the library's decorators stay out of the app's scope.
  await app.register(async (child) => {
    await child.register(rateLimit, { global: false, skipOnError: false, ...opts })
    for (const bucket of ['global', 'login'] as const) {
      const check = child.createRateLimit({
        timeWindow: WINDOW_MS,
        max: (req: FastifyRequest) => req.rateLimitMax ?? DEFAULT_BUDGET[bucket],
        keyGenerator: (req: FastifyRequest) => `${bucket}:${rateLimitSubject(req.ip)}`,
      })
      out[bucket] = check
    }
  })
  return out
}

/**
 * Settles as `p` does, or rejects once `ms` have passed. Why the setImmediate: a timer that fires after
 * this process was busy (a long GC, a slow in-process PGlite query) runs before the loop reads the
 * sockets, so a reply already waiting would be called late; one turn of I/O polling lets it count.
 */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return
          settled = true
          reject(new Error(`Redis did not answer within ${ms} ms`))
        }),
      ms,
    )
    p.then(
      (v) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(v)
      },
      (err: unknown) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}

/**
 * Tracks whether Redis answers in time. A command that fails or times out marks it silent; then a probe
 * runs every REDIS_PROBE_INTERVAL_MS until one is answered within the command timeout. The probe is a
 * write, because `CLIENT PAUSE WRITE` answers reads while it holds the counters' scripts.
 */
function watchAnswers(redis: Redis, probeKey: string) {
  let answering = true
  let inFlight = false
  let unanswered = 0
  let closed = false
  let timer: NodeJS.Timeout | undefined
  const stop = () => {
    if (timer) clearInterval(timer)
    timer = undefined
  }
  const probe = () => {
    if (inFlight || redis.status !== 'ready') return
    inFlight = true
    within(redis.set(probeKey, '1', 'PX', 10_000), REDIS_COMMAND_TIMEOUT_MS)
      .then(
        () => {
          answering = true
          unanswered = 0
          stop()
        },
        () => {
          // Why: replies are matched to commands in order, so on a connection that lost its replies
          // (half-open) every later probe times out too; a new connection starts a clean queue.
          if (++unanswered >= REDIS_PROBES_BEFORE_RECONNECT && !closed) {
            unanswered = 0
            redis.disconnect(true)
          }
        },
      )
      .finally(() => {
        inFlight = false
      })
  }
  return {
    get answering() {
      return answering
    },
    silent() {
      if (!answering || closed) return
      answering = false
      timer = setInterval(probe, REDIS_PROBE_INTERVAL_MS)
      timer.unref()
    },
    close() {
      closed = true
      stop()
    },
  }
}

/**
 * Per-IP budgets: shared through Redis when REDIS_URL is set, falling back to local counters whenever
 * Redis refuses or does not answer within REDIS_COMMAND_TIMEOUT_MS (requests are never refused for it).
 * Local means the cluster's when this process is one of several workers (WORKERS above 1: the primary
 * holds them for all, src/lib/cluster-window-store.ts), this process's otherwise. IPv6 clients share a
 * budget per /64. The counters are WindowCounterStores, bounded in memory (LOCAL_MAX_KEYS live keys a
 * budget) without ever dropping a running window.
 */
async function rateLimitPlugin(
  app: FastifyInstance,
  opts: { redisUrl?: string; redisKeyPrefix?: string; clusterWorker?: boolean; localMaxKeys?: number },
): Promise<void> {
  const local: Record<Bucket, WindowCounterStore> = {
    global: new WindowCounterStore({ windowMs: WINDOW_MS, maxKeys: opts.localMaxKeys }),
    login: new WindowCounterStore({ windowMs: WINDOW_MS, maxKeys: opts.localMaxKeys }),
  }
  // Why both conditions: WORKERS is read by every process, but only a forked worker has a primary.
  const clusterCounters = opts.clusterWorker && cluster.isWorker ? new ClusterWindowClient(process) : null
  app.addHook('onClose', async () => {
    local.global.close()
    local.login.close()
    clusterCounters?.close()
  })
  const checkLocal = async (req: FastifyRequest, bucket: Bucket, max: number): Promise<Outcome> => {
    const key = rateLimitSubject(req.ip)
    let hit: WindowHit | undefined
    if (clusterCounters) {
      // Why the fallback: a primary that does not answer must not hold requests; this worker counts alone.
      hit = await clusterCounters.hit(bucket, WINDOW_MS, key).catch(() => undefined)
    }
    hit ??= local[bucket].hit(key)
    return {
      isAllowed: false,
      max,
      remaining: Math.max(0, max - hit.current),
      ttlInSeconds: Math.ceil(hit.ttlMs / 1000),
      isExceeded: hit.current > max,
    }
  }

  let shared: Record<Bucket, Check> | null = null
  let redis: Redis | null = null
  let answers: ReturnType<typeof watchAnswers> | null = null
  if (opts.redisUrl) {
    // Why the configured prefix: deployments that share one Redis must not share counters.
    const nameSpace = `${opts.redisKeyPrefix ?? 'tessera:'}rl:`
    // Why 1 s: a backstop for commands nobody waits for any more (the handshake, INFO, counters given up
    // on after REDIS_COMMAND_TIMEOUT_MS by `within`), so a paused Redis holds none of them for long.
    redis = await connectRedis(opts.redisUrl, 1000)
    shared = await sharedLimiters(app, { redis, nameSpace })
    const r = redis
    const a = watchAnswers(r, `${nameSpace}probe`)
    answers = a
    app.ctx.redisStatus = () => (r.status === 'ready' && a.answering ? 'up' : 'down')
    app.addHook('onClose', async () => {
      a.close()
      r.disconnect()
    })
  }

  app.decorate(
    'checkRateLimit',
    async (req: FastifyRequest, reply: FastifyReply, bucket: Bucket, max: number) => {
      req.rateLimitMax = max
      let res: Outcome | undefined
      if (shared && redis?.status === 'ready' && answers?.answering) {
        try {
          // Why: a paused Redis keeps its connections open and answers nothing; this bounds each wait.
          res = await within(shared[bucket](req), REDIS_COMMAND_TIMEOUT_MS)
        } catch {
          // Why: a timeout or error marks Redis silent, so the next requests do not wait for it too.
          answers.silent()
        }
      }
      res ??= await checkLocal(req, bucket, max)
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
