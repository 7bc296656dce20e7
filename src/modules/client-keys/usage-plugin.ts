import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { normalizeIp } from '../../lib/cidr.js'
import { recordedIp } from '../audit/write.js'
import { UsageLog, type UsageLogOptions } from './usage-log.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Client Key usage log (buffered; flushed on a timer and on close). */
    keyUsage: UsageLog
  }
}

// Why caps: these are caller-supplied headers stored per request; a few hundred characters is plenty.
const MAX_ORIGIN = 255
const MAX_USER_AGENT = 512

const header = (v: string | string[] | undefined, max: number): string | null =>
  typeof v === 'string' ? v.slice(0, max) : null

/** The URL up to its query string. */
const pathOf = (url: string): string => {
  const q = url.indexOf('?')
  return q === -1 ? url : url.slice(0, q)
}

/**
 * Records every request made with a Client Key (the principal the gate set) after its response is
 * sent. Must be registered at the root, before the route modules: Fastify copies a context's hooks
 * when a child plugin is created, so a hook added after them would never see their routes. Its onClose
 * flush runs before the database closes, because avvio runs onClose hooks last-registered first and
 * buildApp adds the database's onClose before any plugin.
 */
async function keyUsagePlugin(app: FastifyInstance, opts: UsageLogOptions): Promise<void> {
  const usage = new UsageLog(app.ctx.dbs.main, app.ctx.clock, app.log, opts)
  app.decorate('keyUsage', usage)
  usage.start()
  app.addHook('onResponse', (req, reply, done) => {
    const p = req.principal
    const key = p?.kind === 'client_key' ? p : req.refusedKey
    if (key) {
      usage.record({
        tenantId: key.tenantId,
        keyId: key.keyId,
        method: req.method,
        route: req.routeOptions.url ?? pathOf(req.url),
        statusCode: reply.statusCode,
        ip: recordedIp(normalizeIp(req.ip)),
        origin: header(req.headers.origin, MAX_ORIGIN),
        userAgent: header(req.headers['user-agent'], MAX_USER_AGENT),
        requestId: req.id,
      })
    }
    done()
  })
  app.addHook('onClose', async () => {
    await usage.close()
  })
}

export default fp(keyUsagePlugin, { name: 'key-usage', dependencies: ['gate'] })
