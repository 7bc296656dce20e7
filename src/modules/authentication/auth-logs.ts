import { tdb, type AppContext } from '../../context.js'
import type { Principal } from '../../security/principal.js'
import { parseSince } from '../../lib/duration.js'
import { fail } from '../../errors.js'
import { countAuditRowsPerBucket } from '../audit/stats.js'
import { listAuditRows } from '../audit/queries.js'
import type { AuditAction } from '../audit/write.js'

export interface AuthLogsQuery {
  action?: AuditAction
  success?: boolean
  /** How far back from now (a duration, see parseSince). */
  since?: string
  userId?: string
  ip?: string
  actorId?: string
  targetId?: string
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
      actorId: query.actorId,
      targetId: query.targetId,
    },
    { limit: query.limit ?? 50, offset: query.offset },
  )
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/**
 * Per bucket width: its length, the default window, and the longest window. The longest bounds both the
 * range the database scans and the response (169 hourly or 367 daily points per action).
 */
const WINDOWS = {
  hour: { step: HOUR_MS, defaultSpan: 24 * HOUR_MS, maxSpan: 7 * DAY_MS, maxText: '7 days' },
  day: { step: DAY_MS, defaultSpan: 30 * DAY_MS, maxSpan: 366 * DAY_MS, maxText: '366 days' },
} as const

export interface AuthLogStatsQuery {
  bucket?: 'hour' | 'day'
  from?: string
  to?: string
}

interface StatsPoint {
  start: string
  success: number
  failure: number
}

function invalidWindow(path: string, message: string): never {
  fail('VALIDATION_ERROR', 'Request validation failed', [{ path, message }])
}

/**
 * Epoch milliseconds of an RFC 3339 text the schema has accepted. The schema's date-time format lets through
 * what Date cannot hold (a leap second `:60`, a year past 275760): a 400, not a NaN reaching the database.
 */
function instant(text: string, path: string): number {
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) invalidWindow(path, 'must be a date-time this service can represent')
  return ms
}

/**
 * GET /auth-logs/stats: the caller's tenant's audit rows of [from, to) counted per UTC hour or day, per
 * action and outcome. The database groups; the gaps are filled here, since the console's charts want
 * continuous series and a generate_series join would only move the same work into the query.
 */
export async function getAuthLogStats(ctx: AppContext, actor: Principal, query: AuthLogStatsQuery) {
  const bucket = query.bucket ?? 'hour'
  const w = WINDOWS[bucket]
  const to = query.to === undefined ? ctx.clock.now() : instant(query.to, 'query.to')
  const asked = query.from === undefined ? to - w.defaultSpan : instant(query.from, 'query.from')
  if (asked >= to) invalidWindow('query.from', 'must be before `to`')
  if (to - asked > w.maxSpan) invalidWindow('query.from', `the window is at most ${w.maxText} by ${bucket}`)
  // Epoch time has no leap seconds and UTC no offset, so a UTC hour or day starts at a multiple of its
  // length: the same boundaries as the query's date_trunc(..., 'UTC').
  const from = Math.floor(asked / w.step) * w.step
  const count = Math.ceil((to - from) / w.step)
  const rows = await countAuditRowsPerBucket(tdb(ctx, actor), actor.tenantId, bucket, {
    from,
    to,
    now: ctx.clock.now(),
  })
  const byAction = new Map<AuditAction, StatsPoint[]>()
  for (const row of rows) {
    const action = row.action as AuditAction
    let points = byAction.get(action)
    if (points === undefined) {
      points = Array.from({ length: count }, (_, i) => ({
        start: new Date(from + i * w.step).toISOString(),
        success: 0,
        failure: 0,
      }))
      byAction.set(action, points)
    }
    const point = points[Math.round((row.start.getTime() - from) / w.step)]
    if (point === undefined) continue // cannot happen: every row is in [from, to)
    // `+=`: a bucket may come in two parts, the rollup's closed hours and the audit log's latest rows.
    point.success += row.success
    point.failure += row.failure
  }
  return {
    bucket,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    series: [...byAction.keys()].sort().map((action) => ({ action, buckets: byAction.get(action) ?? [] })),
  }
}
