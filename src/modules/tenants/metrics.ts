import type { AppContext } from '../../context.js'
import { countFailedLogins, failuresByIp, loginSummary } from '../audit/login-stats-queries.js'
import { countActiveSessions } from '../sessions/queries.js'
import { countActiveKeys } from '../client-keys/queries.js'
import { countCustomPermissions } from '../permissions/queries.js'
import { countRoles } from '../roles/queries.js'
import { countUsers } from '../users/queries.js'

const DAY_MS = 24 * 60 * 60 * 1000
const FIVE_MIN_MS = 5 * 60 * 1000
/** Interface, Limits: more than 10 failed logins within 5 minutes. */
const BRUTE_FORCE_ABOVE = 10
/** Interface, Limits: 5 or more failed logins within 24 hours. */
const SUSPICIOUS_FROM = 5
const TOP_OFFENDERS = 10
// Why a cap: the list grows with the number of attacking addresses; the worst come first.
const SUSPICIOUS_MAX = 100

/** GET /tenants/me/metrics: counts of the tenant's users, sessions, roles, permissions, keys and logins. */
export async function getTenantMetrics(ctx: AppContext, tenantId: string) {
  const db = ctx.dbs.forTenant(tenantId)
  const nowMs = ctx.clock.now()
  const now = new Date(nowMs)
  const [users, sessions, roles, permissions, keys, logins] = await Promise.all([
    countUsers(db, tenantId),
    countActiveSessions(db, tenantId, now),
    countRoles(db, tenantId),
    countCustomPermissions(db, tenantId),
    // Client Keys always live in the main database.
    countActiveKeys(ctx.dbs.main, tenantId, now),
    loginSummary(db, tenantId, new Date(nowMs - DAY_MS)),
  ])
  return {
    users,
    sessions: { active: sessions },
    roles,
    customPermissions: permissions,
    clientKeys: { active: keys },
    logins24h: {
      total: logins.total,
      successful: logins.successful,
      failed: logins.total - logins.successful,
    },
  }
}

/**
 * GET /tenants/me/metrics/security: the 24-hour login summary, the 5-minute failure window with the
 * brute-force flag (more than 10), the 10 worst addresses of 24 hours and those at 5 or more failures.
 */
export async function getSecurityMetrics(ctx: AppContext, tenantId: string) {
  const nowMs = ctx.clock.now()
  const dayAgo = new Date(nowMs - DAY_MS)
  const db = ctx.dbs.forTenant(tenantId)
  const [summary, recent, top, suspicious] = await Promise.all([
    loginSummary(db, tenantId, dayAgo),
    countFailedLogins(db, tenantId, new Date(nowMs - FIVE_MIN_MS)),
    failuresByIp(db, tenantId, dayAgo, 1, TOP_OFFENDERS),
    failuresByIp(db, tenantId, dayAgo, SUSPICIOUS_FROM, SUSPICIOUS_MAX),
  ])
  const failed = summary.total - summary.successful
  const failedAttempts = Number(recent.n)
  return {
    last24h: {
      total: summary.total,
      successful: summary.successful,
      failed,
      // Why 0 without attempts: no evidence of success; percent with two decimals.
      successRate: summary.total === 0 ? 0 : Math.round((summary.successful / summary.total) * 10_000) / 100,
    },
    last5m: {
      failedAttempts,
      uniqueIps: Number(recent.ips),
      possibleBruteForce: failedAttempts > BRUTE_FORCE_ABOVE,
    },
    ipAnalysis: {
      topOffenders: top.map((r) => ({
        ip: r.ip_address as string,
        failures: Number(r.failures),
        lastAttemptAt: new Date(r.last_at as Date | string).toISOString(),
      })),
      suspiciousIps: suspicious.map((r) => ({ ip: r.ip_address as string, failures: Number(r.failures) })),
    },
  }
}
