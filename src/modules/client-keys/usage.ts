import type { components } from '../../../generated/openapi.js'
import type { AppContext } from '../../context.js'
import type { PageParams } from '../../db/paginate.js'
import type { Principal } from '../../security/principal.js'
import { ownKey } from './service.js'
import { listUsage } from './usage-queries.js'
import { countableUntil, rollUpKeyUsage, usageStats } from './usage-rollup-queries.js'

const DAY_MS = 86_400_000

type ClientKeyLog = components['schemas']['ClientKeyLog']

/** GET /client-keys/:id/logs: one page of a key's request log, newest first (default 50 a page). */
export async function getClientKeyLogs(ctx: AppContext, actor: Principal, id: string, query: PageParams) {
  await ownKey(ctx, actor, id)
  const page = await listUsage(ctx.dbs.main, actor.tenantId, id, {
    limit: query.limit ?? 50,
    offset: query.offset,
  })
  return {
    ...page,
    items: page.items.map((r) => ({
      id: r.id,
      keyId: r.key_id,
      // Why a cast: the column is text, written from the request's method by the usage plugin.
      method: r.method as ClientKeyLog['method'],
      route: r.route,
      statusCode: r.status_code,
      ip: r.ip,
      origin: r.origin,
      userAgent: r.user_agent,
      requestId: r.request_id,
      createdAt: new Date(r.created_at).toISOString(),
    })),
  }
}

/** GET /client-keys/:id/stats: request counts (all time, last 24 h, by status class) and the most used routes. */
export async function getClientKeyStats(ctx: AppContext, actor: Principal, id: string) {
  const key = await ownKey(ctx, actor, id)
  const nowMs = ctx.clock.now()
  const s = await usageStats(ctx.dbs.main, actor.tenantId, id, new Date(nowMs - DAY_MS))
  // Hours closed since the key's mark are counted now, so the next request reads them summed (D29).
  const until = countableUntil(nowMs)
  if (s.coveredToMs < until.getTime()) await rollUpKeyUsage(ctx.dbs.main, actor.tenantId, id, until)
  return {
    totalRequests: s.total,
    last24h: s.recent,
    byStatus: { '2xx': s.s2, '4xx': s.s4, '5xx': s.s5 },
    lastUsedAt: key.last_used_at === null ? null : new Date(key.last_used_at).toISOString(),
    topRoutes: s.routes,
  }
}
