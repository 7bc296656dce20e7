import { sql, type Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

// Audit rows counted, not listed: LOGIN rows for the tenant metrics (modules/tenants/metrics.ts), range
// scans of audit_log_tenant_action_time_success; every action per time bucket for GET /auth-logs/stats.

/**
 * Leaves out LOGIN rows of logins stopped at the second factor (OTP_REQUIRED, OTP_ENROLLMENT_REQUIRED):
 * the password was right and the login goes on at POST /login/otp, so a user who passes both factors is
 * one successful login, not a failure.
 */
export const notStoppedAtSecondFactor = sql<boolean>`(error_message is null or error_message not in ('OTP_REQUIRED', 'OTP_ENROLLMENT_REQUIRED'))`

/** LOGIN attempts since `since`: one range scan. */
export async function loginSummary(db: Kysely<Database>, tenantId: string, since: Date) {
  const row = await db
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

/** Failed LOGIN rows of the tenant since `since`. */
function failedLogins(db: Kysely<Database>, tenantId: string, since: Date) {
  return db
    .selectFrom('tessera_audit.audit_log')
    .where('tenant_id', '=', tenantId)
    .where('action', '=', 'LOGIN')
    .where('success', '=', false)
    .where(notStoppedAtSecondFactor)
    .where('created_at', '>=', since)
}

/** Failed logins since `since` and the distinct addresses they came from. */
export function countFailedLogins(db: Kysely<Database>, tenantId: string, since: Date) {
  return failedLogins(db, tenantId, since)
    .select((eb) => [eb.fn.countAll<number>().as('n'), sql<number>`count(distinct ip_address)`.as('ips')])
    .executeTakeFirstOrThrow()
}

/** Failures per address since `since`, most first; only addresses with at least `min` failures. */
export function failuresByIp(
  db: Kysely<Database>,
  tenantId: string,
  since: Date,
  min: number,
  limit: number,
) {
  return failedLogins(db, tenantId, since)
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
 * Audit rows of the tenant in [from, to), counted per UTC `bucket` (date_trunc), action and outcome, for
 * GET /auth-logs/stats. Only buckets with rows come back; the caller fills the gaps. One range scan of
 * audit_log_tenant_time (tenant_id, created_at desc); LOGIN rows stopped at the second factor are left out
 * as in loginSummary, since the login's second step writes its own LOGIN row.
 */
export async function countAuditRowsByBucket(
  db: Kysely<Database>,
  tenantId: string,
  bucket: 'hour' | 'day',
  from: Date,
  to: Date,
) {
  // The unit is one of two literals, never the caller's text: sql.lit keeps it a constant, so the
  // grouping expression is the same in select and group by.
  const start = sql<Date>`date_trunc(${sql.lit(bucket)}, created_at, 'UTC')`
  const rows = await db
    .selectFrom('tessera_audit.audit_log')
    .select([
      start.as('start'),
      'action',
      sql<string>`count(*) filter (where success)`.as('success'),
      sql<string>`count(*) filter (where not success)`.as('failure'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where(notStoppedAtSecondFactor)
    .groupBy([start, 'action'])
    .execute()
  return rows.map((r) => ({
    start: new Date(r.start),
    action: r.action,
    success: Number(r.success),
    failure: Number(r.failure),
  }))
}
