import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// Upper bounds (seconds) of the latency histogram; bcrypt-bound logins land near 0.25.
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

interface Series {
  count: number
  sum: number
  buckets: number[]
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

declare module 'fastify' {
  interface FastifyInstance {
    /** Renders every metric in the Prometheus text format. */
    renderMetrics(): string
  }
}

/**
 * Request counts and latencies by route template, method and status; login outcomes; bcrypt queue
 * depth; database pool use. Label values are route templates, never raw URLs, so the series stay bounded.
 */
async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const series = new Map<string, Series>()
  const logins = new Map<string, number>()

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched'
    const key = `${req.method}\u0000${route}\u0000${reply.statusCode}`
    let s = series.get(key)
    if (!s) {
      s = { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) }
      series.set(key, s)
    }
    const seconds = reply.elapsedTime / 1000
    s.count++
    s.sum += seconds
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) s.buckets[i]++
    if (req.routeOptions.config?.operationId === 'login') {
      const outcome =
        reply.statusCode === 200 ? 'success' : reply.statusCode === 429 ? 'rate_limited' : 'failure'
      logins.set(outcome, (logins.get(outcome) ?? 0) + 1)
    }
    done()
  })

  app.decorate('renderMetrics', () => {
    const out: string[] = []
    out.push('# HELP tessera_http_requests_total HTTP requests by method, route template and status.')
    out.push('# TYPE tessera_http_requests_total counter')
    for (const [key, s] of series) {
      const [method, route, status] = key.split('\u0000')
      out.push(
        `tessera_http_requests_total{method="${method}",route="${esc(route)}",status="${status}"} ${s.count}`,
      )
    }
    out.push('# HELP tessera_http_request_duration_seconds HTTP request latency.')
    out.push('# TYPE tessera_http_request_duration_seconds histogram')
    for (const [key, s] of series) {
      const [method, route, status] = key.split('\u0000')
      const labels = `method="${method}",route="${esc(route)}",status="${status}"`
      BUCKETS.forEach((b, i) =>
        out.push(`tessera_http_request_duration_seconds_bucket{${labels},le="${b}"} ${s.buckets[i]}`),
      )
      out.push(`tessera_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`)
      out.push(`tessera_http_request_duration_seconds_sum{${labels}} ${s.sum.toFixed(6)}`)
      out.push(`tessera_http_request_duration_seconds_count{${labels}} ${s.count}`)
    }
    out.push('# HELP tessera_logins_total Login attempts by outcome.')
    out.push('# TYPE tessera_logins_total counter')
    for (const outcome of ['success', 'failure', 'rate_limited']) {
      out.push(`tessera_logins_total{outcome="${outcome}"} ${logins.get(outcome) ?? 0}`)
    }
    out.push('# HELP tessera_bcrypt_queue_depth Password hash operations waiting or running.')
    out.push('# TYPE tessera_bcrypt_queue_depth gauge')
    out.push(`tessera_bcrypt_queue_depth ${app.ctx.hasher.queueDepth()}`)
    const pool = app.ctx.dbs.poolStats()
    out.push('# HELP tessera_db_pool_connections Database connections by state, over all pools.')
    out.push('# TYPE tessera_db_pool_connections gauge')
    out.push(`tessera_db_pool_connections{state="total"} ${pool.totalConnections}`)
    out.push(`tessera_db_pool_connections{state="idle"} ${pool.idleConnections}`)
    out.push(`tessera_db_pool_connections{state="waiting"} ${pool.waiting}`)
    out.push('# HELP tessera_db_pools Database pools (main plus routed tenants).')
    out.push('# TYPE tessera_db_pools gauge')
    out.push(`tessera_db_pools ${pool.pools}`)
    return out.join('\n') + '\n'
  })
}

export default fp(metricsPlugin, { name: 'metrics' })
