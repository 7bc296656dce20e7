import { sql } from 'kysely'
import type { AppContext } from '../../context.js'

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
    db
      .selectFrom('users')
      .select((eb) => [
        eb.fn.countAll<number>().as('total'),
        sql<number>`count(*) filter (where status = 'ACTIVE')`.as('active'),
      ])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('roles')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('permissions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      // Why: `r:*` rows exist only to hold grants (permissions/queries.ts); they are not custom permissions.
      .where('action', '<>', '*')
      .executeTakeFirstOrThrow(),
    // Client Keys always live in the main database.
    ctx.dbs.main
      .selectFrom('client_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'ACTIVE')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow(),
    loginSummary(ctx, tenantId, new Date(nowMs - DAY_MS)),
  ])
  return {
    users: { total: Number(users.total), active: Number(users.active) },
    sessions: { active: Number(sessions.n) },
    roles: Number(roles.n),
    customPermissions: Number(permissions.n),
    clientKeys: { active: Number(keys.n) },
    logins24h: {
      total: logins.total,
      successful: logins.successful,
      failed: logins.total - logins.successful,
    },
  }
}

/**
 * Leaves out LOGIN rows of logins stopped at the second factor (OTP_REQUIRED, OTP_ENROLLMENT_REQUIRED):
 * the password was right and the login goes on at POST /login/otp, so a user who passes both factors is
 * one successful login, not a failure.
 */
const notStoppedAtSecondFactor = sql<boolean>`(error_message is null or error_message not in ('OTP_REQUIRED', 'OTP_ENROLLMENT_REQUIRED'))`

/** LOGIN attempts since `since`: one range scan of audit_log_tenant_action_time_success. */
async function loginSummary(ctx: AppContext, tenantId: string, since: Date) {
  const row = await ctx.dbs
    .forTenant(tenantId)
    .selectFrom('tessera_audit.audit_log')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) filter (where success)`.as('ok'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('action', '=', 'LOGIN')
    .where(notStoppedAtSecondFactor)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow()
  return { total: Number(row.total), successful: Number(row.ok) }
}

/** Failed LOGIN rows of the tenant since `since`: a range scan of audit_log_tenant_action_time_success. */
function failedLogins(ctx: AppContext, tenantId: string, since: Date) {
  return ctx.dbs
    .forTenant(tenantId)
    .selectFrom('tessera_audit.audit_log')
    .where('tenant_id', '=', tenantId)
    .where('action', '=', 'LOGIN')
    .where('success', '=', false)
    .where(notStoppedAtSecondFactor)
    .where('created_at', '>=', since)
}

/** Failures per address since `since`, most first; only addresses with at least `min` failures. */
function failuresByIp(ctx: AppContext, tenantId: string, since: Date, min: number, limit: number) {
  return failedLogins(ctx, tenantId, since)
    .where('ip_address', 'is not', null)
    .select((eb) => [
      'ip_address',
      eb.fn.countAll<number>().as('failures'),
      eb.fn.max('created_at').as('last_at'),
    ])
    .groupBy('ip_address')
    .having((eb) => eb.fn.countAll(), '>=', min)
    .orderBy('failures', 'desc')
    .orderBy('last_at', 'desc')
    .orderBy('ip_address')
    .limit(limit)
    .execute()
}

/**
 * GET /tenants/me/metrics/security: the 24-hour login summary, the 5-minute failure window with the
 * brute-force flag (more than 10), the 10 worst addresses of 24 hours and those at 5 or more failures.
 */
export async function getSecurityMetrics(ctx: AppContext, tenantId: string) {
  const nowMs = ctx.clock.now()
  const dayAgo = new Date(nowMs - DAY_MS)
  const [summary, recent, top, suspicious] = await Promise.all([
    loginSummary(ctx, tenantId, dayAgo),
    failedLogins(ctx, tenantId, new Date(nowMs - FIVE_MIN_MS))
      .select((eb) => [eb.fn.countAll<number>().as('n'), sql<number>`count(distinct ip_address)`.as('ips')])
      .executeTakeFirstOrThrow(),
    failuresByIp(ctx, tenantId, dayAgo, 1, TOP_OFFENDERS),
    failuresByIp(ctx, tenantId, dayAgo, SUSPICIOUS_FROM, SUSPICIOUS_MAX),
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
