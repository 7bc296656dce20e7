import type { Kysely } from 'kysely'
import type { AppContext } from '../../context.js'
import { advisoryUnlock, tryAdvisoryLock } from '../../db/advisory-lock.js'
import type { Database } from '../../db/database.js'
import type { DatabaseRegistry } from '../../db/tenant-db.js'
import { deleteIdleThrottles } from '../account/throttle-queries.js'
import { expireAuditRows, findAuditRetention, setAuditRetentionDays } from '../audit/queries.js'
import { trimRollups } from '../audit/rollup-queries.js'
import {
  deleteExpiredSessions,
  deleteRevokedSessions,
  deleteSpentRefreshTokens,
  givenLifetimes,
} from '../sessions/sweep-queries.js'
import { deleteUsageBefore } from '../client-keys/usage-queries.js'
import { trimKeyUsageRollup } from '../client-keys/usage-rollup-queries.js'
import { sweepEmailTables } from '../email/queries.js'
import { sweepExpiredPayloads } from '../oidc/payload-queries.js'
import { sweepFederation } from '../federation/queries.js'
import { deleteExpiredMfaTokens } from '../otp/queries.js'
import { deleteExpiredChallenges as deleteExpiredPasskeyChallenges } from '../passkeys/queries.js'
import { deleteExpiredChallenges } from '../publishable-keys/queries.js'
import { findRefreshLifetimes, refreshLifetimes } from '../tenants/queries.js'
import { keepingPlace, Pacer, type PaceHooks } from './pace.js'

// Retention and sweeping (docs/decisions.md D15, D17): audit rows past the retention period, Client Key
// usage rows past USAGE_RETENTION_DAYS, dead sessions with their refresh tokens, spent refresh tokens,
// expired mfaTokens and passkey challenges, idle throttling counters and used sign-up solutions past their
// challenge's expiry. Bounded batches that keep their place and yield to a busy database (pace.ts), one
// instance at a time (advisory lock).

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
  /** Used sign-up proofs of work whose challenge expired (signup_challenges_used). */
  challenges: number
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

/** A new pacer for one table's sweep on `db` (system/pace.ts). */
type Pace = (db: Conn) => Pacer

type SessionCounts = Pick<SweepCounts, 'sessions' | 'refreshTokens' | 'mfaTokens'>
type Warner = { warn(obj: object, msg: string): void }

/** Audit rows older than `days` days by the database's clock, through the audit owner's function (D17). */
async function expireAudit(conn: Conn, days: number, pace: Pace): Promise<number> {
  // Why the database's clock: tessera_audit.expire_from refuses a cutoff inside the period by that clock.
  const n = await keepingPlace((from, batch) => expireAuditRows(conn, { days, batch, from }), pace(conn))
  // The hourly counts of GET /auth-logs/stats go with the rows they were made from.
  await trimRollups(conn, days)
  return n
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
  const row = await findAuditRetention(conn)
  const stored = row?.days ?? null
  if (configured !== undefined && stored !== configured && row?.can) {
    await setAuditRetentionDays(conn, configured)
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
        '(docs/security.md, "Audit immutability")',
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
  pace: Pace,
  routed?: RoutedTenants,
): Promise<SessionCounts> {
  const lifetimes = routed ? givenLifetimes(routed.ids, routed.lifetimes) : refreshLifetimes()
  // A dead session (revoked, or expired) goes once its tenant's refresh-token lifetime and a day
  // have passed since it died: until then a stolen token of it is still recognised as reuse. Why two
  // statements, neither on sessions.expires_at: no index may name a column a refresh writes (migration
  // 0010), so revoked sessions are found by their partial index, and expired ones through their latest
  // refresh token (see sweep-queries.ts).
  const sessions = await keepingPlace(
    (from, batch) => deleteRevokedSessions(conn, { now, lifetimes, batch, from }),
    pace(conn),
  )
  const expired = await keepingPlace(
    (from, batch) => deleteExpiredSessions(conn, { now, lifetimes, batch, from }),
    pace(conn),
  )
  const tenantIds = routed?.ids
  const refreshTokens = await keepingPlace(
    (from, batch) => deleteSpentRefreshTokens(conn, { now, batch, from, tenantIds }),
    pace(conn),
  )
  const mfaTokens = await deleteExpiredMfaTokens(conn, now, tenantIds)
  await sweepEmailTables(conn, now)
  await deleteExpiredPasskeyChallenges(conn, now)
  // The OpenID provider's expired payloads (codes, tokens, sessions, interactions; contract section 23).
  await keepingPlace((from, limit) => sweepExpiredPayloads(conn, { now, limit, from }), pace(conn))
  // Federated sign-ins' flows and login codes past their 10 minutes and 60 seconds (section 24). Why no
  // place kept: these tables hold minutes of rows.
  await keepingPlace(
    async (_from, batch) => ({ n: await sweepFederation(conn, now, batch), last: null }),
    pace(conn),
  )
  return { sessions: sessions + expired, refreshTokens, mfaTokens }
}

/**
 * The same sweep on every routed tenant database (the main database's advisory lock covers them). One
 * that does not answer is skipped with a warning; the next pass tries again.
 */
async function sweepRouted(
  ctx: SweepContext,
  conn: Conn,
  p: { now: Date; pace: Pace; log?: Warner },
): Promise<SessionCounts & { audit: number }> {
  const total = { audit: 0, sessions: 0, refreshTokens: 0, mfaTokens: 0 }
  for (const { db, tenantIds } of ctx.dbs.routedGroups()) {
    try {
      const rows = await findRefreshLifetimes(conn, tenantIds)
      const routed = { ids: rows.map((r) => r.id), lifetimes: rows.map((r) => Number(r.secs)) }
      // Why audit rows too: a routed tenant's audit rows move with it and are written there.
      const days = await auditSweepDays(db, db, ctx.config.auditRetentionDays, p.log)
      if (days !== null) total.audit += await expireAudit(db, days, p.pace)
      const n = await sweepSessions(db, p.now, p.pace, routed)
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
  opts: { batch?: number; now?: Date; log?: Warner; hooks?: PaceHooks } = {},
): Promise<SweepCounts | null> {
  const batch = Math.min(opts.batch ?? BATCH_ROWS, 10_000)
  // Each table's sweep sizes its own batches (at most `batch` rows), watching the database it sweeps.
  const pace: Pace = (db) => new Pacer(db, batch, opts.hooks)
  const now = opts.now ?? new Date(ctx.clock.now())
  const { auditRetentionDays, usageRetentionDays } = ctx.config
  return ctx.dbs.main.connection().execute(async (conn: Conn) => {
    if (!(await tryAdvisoryLock(conn, LOCK_KEY))) return null
    try {
      const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000)
      const auditDays = await auditSweepDays(conn, ctx.dbs.main, auditRetentionDays, opts.log)
      const audit = auditDays === null ? 0 : await expireAudit(conn, auditDays, pace)
      const before = daysAgo(usageRetentionDays)
      const usage = await keepingPlace(
        (from, batch) => deleteUsageBefore(conn, { before, batch, from }),
        pace(conn),
      )
      // The counted hours of GET /client-keys/{id}/stats go with the rows they were made from (D29).
      await trimKeyUsageRollup(conn, before)
      const own = await sweepSessions(conn, now, pace)
      // The longest lock is 7 days: a counter idle for 8 can no longer matter.
      const throttle = await deleteIdleThrottles(conn, daysAgo(8))
      // An expired challenge can no longer verify, so its used solution need not be remembered.
      const challenges = await deleteExpiredChallenges(conn, now)
      const routed = await sweepRouted(ctx, conn, { now, pace, log: opts.log })
      return {
        audit: audit + routed.audit,
        usage,
        sessions: own.sessions + routed.sessions,
        refreshTokens: own.refreshTokens + routed.refreshTokens,
        mfaTokens: own.mfaTokens + routed.mfaTokens,
        throttle,
        challenges,
      }
    } finally {
      await advisoryUnlock(conn, LOCK_KEY)
    }
  })
}
