import { sql, type Kysely } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import type { DatabaseRegistry } from '../../db/tenant-db.js'
import { defaultAuthConfig } from '../tenants/auth-config.js'
import { sweepEmailTables } from '../email/queries.js'

// Retention and sweeping (docs/decisions.md D15, D17): audit rows past the retention period, Client Key
// usage rows past USAGE_RETENTION_DAYS, dead sessions with their refresh tokens, spent refresh tokens,
// expired mfaTokens and idle throttling counters. Bounded batches, one instance at a time (advisory lock).

/** Rows one statement removes at most; the audit function refuses more than 10,000. */
export const BATCH_ROWS = 5000
/** The advisory lock key every instance tries before a pass: only its holder sweeps. */
const LOCK_KEY = 0x7e55e7a0

export interface SweepCounts {
  audit: number
  usage: number
  sessions: number
  refreshTokens: number
  mfaTokens: number
  throttle: number
}

type Conn = Kysely<Database>

/**
 * What a pass reads of the context, and nothing more: the service passes its AppContext, and a caller
 * without one (bench/scale-retention.ts) builds exactly this, so a new need of the sweep is a type error
 * there rather than a crash.
 */
export interface SweepContext {
  readonly dbs: Pick<DatabaseRegistry, 'main' | 'routedGroups'>
  readonly clock: AppContext['clock']
  readonly config: Pick<AppContext['config'], 'auditRetentionDays' | 'usageRetentionDays'>
}

/** Deletes in batches of `batch` until a batch comes back short; returns the total. */
async function inBatches(run: () => Promise<number>, batch: number): Promise<number> {
  let total = 0
  for (;;) {
    const n = await run()
    total += n
    if (n < batch) return total
    // Why yield between batches: other statements of this process run in between, never behind a long one.
    await new Promise((r) => setImmediate(r))
  }
}

const count = (r: { numDeletedRows?: bigint; numAffectedRows?: bigint } | undefined) =>
  Number(r?.numDeletedRows ?? r?.numAffectedRows ?? 0)

/** A tenant row's refresh-token lifetime in seconds (its stored one, else the default every tenant starts from). */
const REFRESH_LIFETIME = sql<number>`coalesce((auth_config->>'refreshTokenExpiresIn')::integer, ${
  defaultAuthConfig().refreshTokenExpiresIn
})`

type SessionCounts = Pick<SweepCounts, 'sessions' | 'refreshTokens' | 'mfaTokens'>
type Warner = { warn(obj: object, msg: string): void }

/** Audit rows older than `days` days by the database's clock, through the audit owner's function (D17). */
function expireAudit(conn: Conn, days: number, batch: number): Promise<number> {
  return inBatches(async () => {
    // Why the database's clock: tessera_audit.expire refuses a cutoff inside the period by that clock.
    const r = await sql<{ n: string }>`select tessera_audit.expire(
      now() - make_interval(days => ${days}::integer), ${batch}::integer) as n`.execute(conn)
    return Number(r.rows[0]?.n ?? 0)
  }, batch)
}

/** The mismatch last warned about, per database handle: each is said once, not every pass. */
const warned = new WeakMap<object, string>()

/**
 * The days audit rows of one database are swept after (null: kept). The database's own period
 * (tessera_audit.settings) is the bound: AUDIT_RETENTION_DAYS becomes it when the connected role may
 * change it (a superuser: PGlite, tests); otherwise the longer of the two is used, with a warning.
 */
export async function auditSweepDays(
  conn: Conn,
  key: object,
  configured: number | undefined,
  log?: Warner,
): Promise<number | null> {
  const { rows } = await sql<{ days: number | null; can: boolean }>`select s.retention_days as days,
    has_table_privilege('tessera_audit.settings', 'UPDATE') as can from tessera_audit.settings s`.execute(
    conn,
  )
  const stored = rows[0]?.days ?? null
  if (configured !== undefined && stored !== configured && rows[0]?.can) {
    await sql`select tessera_audit.set_retention_days(${configured}::integer)`.execute(conn)
    return configured
  }
  if (stored === (configured ?? null)) return stored
  const days = stored === null || configured === undefined ? null : Math.max(stored, configured)
  const said = `${String(configured)}/${String(stored)}`
  if (warned.get(key) !== said) {
    warned.set(key, said)
    log?.warn(
      { auditRetentionDays: configured ?? null, databaseRetentionDays: stored, sweepDays: days },
      'AUDIT_RETENTION_DAYS differs from the audit retention period of the database, which only the ' +
        'audit owner can change: audit rows are swept with the longer of the two ' +
        '(README, "Audit immutability")',
    )
  }
  return days
}

/** At start: brings each database's audit retention period in line with AUDIT_RETENTION_DAYS, or warns. */
export async function reconcileAuditRetention(ctx: AppContext, log: Warner): Promise<void> {
  const dbs = [ctx.dbs.main, ...ctx.dbs.routedGroups().map((g) => g.db)]
  for (const db of dbs) {
    await auditSweepDays(db, db, ctx.config.auditRetentionDays, log).catch((err: unknown) =>
      log.warn({ err }, 'retention: the audit retention period of a database could not be read'),
    )
  }
}

/** The tenants routed to one database, with their refresh-token lifetimes (seconds) read from the main one. */
interface RoutedTenants {
  ids: string[]
  lifetimes: number[]
}

/**
 * Dead sessions, spent refresh tokens and expired mfaTokens of one database; of the given tenants only
 * when `routed` is set (a routed database may still hold rows of a tenant routed elsewhere since). Why
 * the lifetimes come along: a routed database's copy of the tenant row is written when the tenant moves,
 * not when its configuration changes later.
 */
async function sweepSessions(
  conn: Conn,
  now: Date,
  batch: number,
  routed?: RoutedTenants,
): Promise<SessionCounts> {
  const only = (column: string) => (routed ? sql`and ${sql.ref(column)} = any(${routed.ids}::uuid[])` : sql``)
  const lifetimes = routed
    ? sql`unnest(${routed.ids}::uuid[], ${routed.lifetimes}::integer[]) as l(tenant_id, secs)`
    : sql`(select id as tenant_id, ${REFRESH_LIFETIME} as secs from tenants) l`
  // A dead session (revoked, or expired) goes once its tenant's refresh-token lifetime and a day
  // have passed since it died: until then a stolen token of it is still recognised as reuse. Why two
  // statements, neither on sessions.expires_at: no index may name a column a refresh writes (migration
  // 0010), so revoked sessions are found by their partial index, and expired ones through their latest
  // refresh token (replaced_by null), whose expiry is the session's and which stays until its session goes.
  const dayAgo = sql`${now}::timestamptz - interval '1 day'`
  const sessions = await inBatches(async () => {
    const r = await sql`delete from sessions where id in (
      select s.id from sessions s join ${lifetimes} on l.tenant_id = s.tenant_id
      where s.revoked_at < ${dayAgo} and s.revoked_at < ${dayAgo} - l.secs * interval '1 second'
      limit ${batch})`.execute(conn)
    return Number(r.numAffectedRows ?? 0)
  }, batch)
  const expired = await inBatches(async () => {
    const r = await sql`delete from sessions where id in (
      select s.id from refresh_tokens t join sessions s on s.id = t.session_id
        join ${lifetimes} on l.tenant_id = s.tenant_id
      where t.expires_at < ${dayAgo} and t.replaced_by is null and s.revoked_at is null
        and s.expires_at < ${dayAgo} - l.secs * interval '1 second'
      limit ${batch})`.execute(conn)
    return Number(r.numAffectedRows ?? 0)
  }, batch)
  // Spent tokens only: a session's latest token leaves with its session (on delete cascade).
  const refreshTokens = await inBatches(async () => {
    const r = await sql`delete from refresh_tokens where id in (
      select id from refresh_tokens where expires_at < ${dayAgo} and replaced_by is not null
        ${only('tenant_id')} limit ${batch})`.execute(conn)
    return Number(r.numAffectedRows ?? 0)
  }, batch)
  const r = await sql`delete from mfa_tokens where expires_at < ${now} ${only('tenant_id')}`.execute(conn)
  await sweepEmailTables(conn, now)
  return { sessions: sessions + expired, refreshTokens, mfaTokens: Number(r.numAffectedRows ?? 0) }
}

/**
 * The same sweep on every routed tenant database (the main database's advisory lock covers them). One
 * that does not answer is skipped with a warning; the next pass tries again.
 */
async function sweepRouted(
  ctx: SweepContext,
  conn: Conn,
  p: { now: Date; batch: number; log?: Warner },
): Promise<SessionCounts & { audit: number }> {
  const total = { audit: 0, sessions: 0, refreshTokens: 0, mfaTokens: 0 }
  for (const { db, tenantIds } of ctx.dbs.routedGroups()) {
    try {
      const rows = await conn
        .selectFrom('tenants')
        .select(['id', REFRESH_LIFETIME.as('secs')])
        .where('id', 'in', tenantIds)
        .execute()
      const routed = { ids: rows.map((r) => r.id), lifetimes: rows.map((r) => Number(r.secs)) }
      // Why audit rows too: a routed tenant's audit rows move with it and are written there.
      const days = await auditSweepDays(db, db, ctx.config.auditRetentionDays, p.log)
      if (days !== null) total.audit += await expireAudit(db, days, p.batch)
      const n = await sweepSessions(db, p.now, p.batch, routed)
      total.sessions += n.sessions
      total.refreshTokens += n.refreshTokens
      total.mfaTokens += n.mfaTokens
    } catch (err) {
      p.log?.warn({ err, tenantIds }, 'retention: a routed database could not be swept; the next pass tries')
    }
  }
  return total
}

/**
 * One pass over the main database, then every routed tenant database. Null when another instance holds
 * the lock (it is sweeping). `now` decides what the service considers old, except audit rows: those go
 * by the database's clock and the longer of AUDIT_RETENTION_DAYS and the database's own period.
 */
export async function sweepOnce(
  ctx: SweepContext,
  opts: { batch?: number; now?: Date; log?: Warner } = {},
): Promise<SweepCounts | null> {
  const batch = Math.min(opts.batch ?? BATCH_ROWS, 10_000)
  const now = opts.now ?? new Date(ctx.clock.now())
  const { auditRetentionDays, usageRetentionDays } = ctx.config
  return ctx.dbs.main.connection().execute(async (conn: Conn) => {
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${LOCK_KEY}) as ok`.execute(conn)
    if (!rows[0]?.ok) return null
    try {
      const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000)
      const auditDays = await auditSweepDays(conn, ctx.dbs.main, auditRetentionDays, opts.log)
      const audit = auditDays === null ? 0 : await expireAudit(conn, auditDays, batch)
      const usage = await inBatches(
        async () =>
          count(
            await conn
              .deleteFrom('client_key_usage')
              .where('id', 'in', (eb) =>
                eb
                  .selectFrom('client_key_usage')
                  .select('id')
                  .where('created_at', '<', daysAgo(usageRetentionDays))
                  .limit(batch),
              )
              .executeTakeFirst(),
          ),
        batch,
      )
      const own = await sweepSessions(conn, now, batch)
      // The longest lock is 7 days: a counter idle for 8 can no longer matter.
      const throttle = count(
        await conn.deleteFrom('login_throttle').where('updated_at', '<', daysAgo(8)).executeTakeFirst(),
      )
      const routed = await sweepRouted(ctx, conn, { now, batch, log: opts.log })
      return {
        audit: audit + routed.audit,
        usage,
        sessions: own.sessions + routed.sessions,
        refreshTokens: own.refreshTokens + routed.refreshTokens,
        mfaTokens: own.mfaTokens + routed.mfaTokens,
        throttle,
      }
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(conn)
    }
  })
}
