import { tdb, type AppContext } from '../../context.js'
import type { Principal } from '../../security/principal.js'
import { parseSince } from '../../lib/duration.js'
import { listAuditRows } from '../audit/queries.js'
import type { AuditAction } from '../audit/write.js'

export interface AuthLogsQuery {
  action?: AuditAction
  success?: boolean
  /** How far back from now (a duration, see parseSince). */
  since?: string
  userId?: string
  ip?: string
  limit?: number
  offset?: number
}

/** GET /auth-logs: one page of the caller's tenant's audit rows, newest first (default 50 a page). */
export function listAuthLogs(ctx: AppContext, actor: Principal, query: AuthLogsQuery) {
  const sinceMs = query.since ? parseSince(query.since) : null
  return listAuditRows(
    tdb(ctx, actor),
    actor.tenantId,
    {
      action: query.action,
      success: query.success,
      since: sinceMs === null ? undefined : new Date(ctx.clock.now() - sinceMs),
      userId: query.userId,
      ip: query.ip,
    },
    { limit: query.limit ?? 50, offset: query.offset },
  )
}
