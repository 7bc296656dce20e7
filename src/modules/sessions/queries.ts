import { sql, type Kysely, type Transaction } from 'kysely'
import type { LiveSession } from '../../security/lookups.js'
import type { Database, LoginMethod } from '../../db/database.js'
import { retryOnContention } from '../../db/contention.js'
import { sha256Hex } from '../../lib/tokens.js'
import { userAndGrants, type GrantRow, type Grants } from '../../security/grants.js'
import { grantQueryParts } from '../permissions/grant-queries.js'
import { deleteAccountPayloads, endBoundProviderSessions } from '../oidc/payload-queries.js'

/** The user's active (not revoked, not expired) sessions' ids, oldest first. */
export function activeSessionIds(trx: Transaction<Database>, tenantId: string, userId: string, now: Date) {
  return trx
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute()
}

/** Inserts a session row opened at `now`; returns its id. */
export async function insertSession(
  trx: Transaction<Database>,
  s: {
    tenantId: string
    userId: string
    now: Date
    expiresAt: Date
    ip: string | null
    userAgent: string | null
    loginMethod?: LoginMethod
  },
): Promise<string> {
  const row = await trx
    .insertInto('sessions')
    .values({
      tenant_id: s.tenantId,
      user_id: s.userId,
      created_at: s.now,
      last_used_at: s.now,
      expires_at: s.expiresAt,
      ip: s.ip,
      user_agent: s.userAgent,
      login_method: s.loginMethod ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/** How a session of the user was signed in; null when unknown (or not the user's). */
export async function sessionLoginMethod(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  sessionId: string,
): Promise<LoginMethod | null> {
  const row = await db
    .selectFrom('sessions')
    .select('login_method')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', sessionId)
    .executeTakeFirst()
  return row?.login_method ?? null
}

/** Stores a refresh token of the selector form (its SHA-256, never the value) as row `id` of a session. */
export async function insertRefreshToken(
  trx: Kysely<Database>,
  t: { id: string; tenantId: string; sessionId: string; value: string; now: Date; expiresAt: Date },
): Promise<void> {
  await trx
    .insertInto('refresh_tokens')
    .values({
      id: t.id,
      tenant_id: t.tenantId,
      session_id: t.sessionId,
      token_hash: sha256Hex(t.value),
      by_selector: true,
      created_at: t.now,
      expires_at: t.expiresAt,
    })
    .execute()
}

/**
 * How a presented refresh token's row is found: by its id, then its hash (the selector form: rows with
 * `by_selector`), or by its hash alone (the older form, through the partial unique index on token_hash of
 * the other rows). Either way the hash is the SHA-256 of the whole value, compared by the database: an
 * equality of digests of the presented value tells a caller nothing it can steer, so it needs no
 * constant-time compare of ours.
 */
export type RefreshTokenLookup = { id: string; hash: string } | { id: null; hash: string }

/**
 * The condition that finds a presented token's row `t` (refresh-token.ts): by id and hash for the
 * selector form, by hash through the partial unique index (`not by_selector`) for the older one.
 */
function tokenIs(lookup: RefreshTokenLookup, alias: string) {
  const t = sql.table(alias)
  return lookup.id === null
    ? sql<boolean>`${t}.token_hash = ${lookup.hash} and not ${t}.by_selector`
    : sql<boolean>`${t}.id = ${lookup.id} and ${t}.by_selector and ${t}.token_hash = ${lookup.hash}`
}

// Lock order, shared by every writer of sessions and refresh tokens (logins, refreshes, logouts, reuse
// detection, user and tenant status changes): the user row first when it is locked at all, then session
// rows in id order, then refresh tokens only of sessions already locked. Why: a login revoking the oldest
// session while a refresh rotated that session's token used to lock in opposite orders (40P01).

type SessionScope = { ids: string[] } | { userId: string; except?: string } | { all: true }

/**
 * Locks the active (not revoked) sessions of the scope in id order, marks them revoked and returns them;
 * then, in a second statement whose snapshot sees every token committed while it waited for those
 * locks (a successor a racing refresh just wrote), revokes their refresh tokens.
 */
async function revokeScope(
  trx: Transaction<Database>,
  tenantId: string,
  scope: SessionScope,
  reason: string,
  now: Date,
): Promise<{ id: string; user_id: string; expires_at: Date }[]> {
  if ('ids' in scope && scope.ids.length === 0) return []
  const ended = await trx
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', 'in', (eb) => {
      let q = eb
        .selectFrom('sessions')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('revoked_at', 'is', null)
      if ('ids' in scope) q = q.where('id', 'in', scope.ids)
      if ('userId' in scope) q = q.where('user_id', '=', scope.userId)
      if ('userId' in scope && scope.except !== undefined) q = q.where('id', '<>', scope.except)
      return q.orderBy('id').forUpdate()
    })
    .where('tenant_id', '=', tenantId)
    .returning(['id', 'user_id', 'expires_at'])
    .execute()
  if (ended.length === 0) return []
  let tokens = trx
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
  // Why no id list for the wide scopes: a tenant may hold more sessions than a statement takes parameters.
  if ('ids' in scope) {
    tokens = tokens.where(
      'session_id',
      'in',
      ended.map((r) => r.id),
    )
  } else if ('userId' in scope) {
    tokens = tokens.where('session_id', 'in', (eb) =>
      eb
        .selectFrom('sessions')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('user_id', '=', scope.userId)
        .$if(scope.except !== undefined, (q) => q.where('id', '<>', scope.except ?? '')),
    )
  }
  await tokens.execute()
  return ended.map((r) => ({ id: r.id, user_id: r.user_id, expires_at: new Date(r.expires_at) }))
}

/**
 * Revokes the given sessions of a tenant and every token of theirs, in the shared lock order. Returns the
 * sessions that were not revoked yet (with their expiry); already revoked ones are left as they were.
 */
export async function revokeSessions(
  trx: Transaction<Database>,
  tenantId: string,
  sessionIds: string[],
  reason: string,
  now: Date,
): Promise<{ id: string; user_id: string; expires_at: Date }[]> {
  const ended = await revokeScope(trx, tenantId, { ids: sessionIds }, reason, now)
  // The OpenID provider's sessions signed in with them end too (contract section 23).
  await endBoundProviderSessions(trx, tenantId, ended, now)
  return ended
}

/**
 * Revokes every session of a user (but `except`, when given) and their tokens: user deleted or
 * deactivated, password changed, sessions ended by the user or an administrator; and everything the OpenID
 * provider issued to the user (its sessions cannot be told apart by Tessera session). Lock the user row first.
 * Returns the sessions that were not revoked yet, with their expiry.
 */
export async function endUserSessions(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  reason: string,
  now: Date,
  except?: string,
): Promise<{ id: string; expires_at: Date }[]> {
  const ended = await revokeScope(trx, tenantId, { userId, except }, reason, now)
  // The OpenID provider's sessions, grants and tokens of the user end with them (contract section 23).
  await deleteAccountPayloads(trx, tenantId, userId, now)
  return ended
}

/** How many of the sessions a revocation ended were still active (not past their expiry). */
export function countActive(ended: readonly { expires_at: Date }[], now: Date): number {
  return ended.filter((s) => s.expires_at.getTime() > now.getTime()).length
}

/** Revokes every session and refresh token of a tenant (tenant deactivated), in the shared lock order. */
export async function revokeTenantSessions(
  trx: Transaction<Database>,
  tenantId: string,
  reason: string,
  now: Date,
): Promise<void> {
  await revokeScope(trx, tenantId, { all: true }, reason, now)
}

/**
 * Rotates a refresh token in ONE statement (the hot path of POST /refresh): consumes the token if it,
 * its session and its user are active and the session is younger than its maximum lifetime, extends
 * the session (never past login + sessionMaxLifetimeSeconds) and records where it was used from
 * (`last_used_at`, `ip`, `user_agent`), stores the successor with the session's
 * new end as its expiry, writes the success audit row and reads the user's current grants for the new
 * access token, and the session's login time (`auth_time`, kept across refreshes).
 *
 * Locks follow the shared order: the session row first (`locked`, FOR UPDATE, re-checking `revoked_at`
 * once it holds the lock), then the token, whose conditional UPDATE re-checks `revoked_at` too. So of
 * concurrent callers exactly one gets rows back and the others get undefined with nothing changed; and a
 * logout or revocation that locked the session first leaves `locked` empty, so no successor is written
 * after it, while one that comes second finds the successor and revokes it. Deadlocks and serialisation
 * failures are retried (at most 3 times).
 *
 * The consume names no column of the session: `locked` is the target's own session (a token never changes
 * session), and with `t.session_id = (select id from locked)` a seeded database's planner took the index
 * on session_id and walked every spent token of the session (1,163 rows and 413 buffers per refresh after
 * a minute of refreshing; issue 45, docs/performance.md).
 *
 * Every step finds its row by key (`= (select … from target)`, not `in`/joins): with joins a plan cached
 * while the tables were small scanned all of a tenant's active sessions on every refresh (89 index rows
 * and ~180 buffers per call at 89 sessions; docs/performance.md), and a prepared statement keeps its
 * generic plan. `coalesce(revoked_at, 'infinity') = 'infinity'` means `revoked_at is null` (a revocation is
 * never in the future), but does not imply the predicate of the partial index sessions_active_by_user:
 * with `is null`, that index (all of the tenant's active sessions) was still chosen over the primary
 * key while the table's statistics were those of an empty one.
 *
 * With `asyncCommit` (PostgreSQL servers only) the statement commits asynchronously:
 * `synchronous_commit` off for its own transaction, so it must never run inside a caller's transaction.
 * Why: the WAL flush per refresh cost about a quarter of refresh throughput. What it risks: a database
 * crash can lose the last fraction of a second of rotations, each together with its audit row (never
 * one without the other). Those users' new refresh tokens are then unknown and they log in again, and
 * each consumed token is active again, so reuse detection cannot flag a stolen copy of one used after
 * the crash. Every other write stays synchronous. PGlite has no WAL writer to bound the loss, so there
 * the commit stays synchronous.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  r: {
    tenantId: string
    isPlatform: boolean
    asyncCommit: boolean
    /** The presented token's lookup; its successor is of the selector form. */
    lookup: RefreshTokenLookup
    nextId: string
    nextHash: string
    now: Date
    /** The successor's own expiry; the session's end (login + sessionMaxLifetimeSeconds) caps it. */
    expiresAt: Date
    sessionMaxLifetimeSeconds: number
    meta: { ip: string | null; userAgent: string | null; requestId: string | null }
  },
): Promise<{ user: RotatedUser; grants: Grants } | undefined> {
  // Why: set_config(..., true) lasts until the end of the transaction, which must be this statement's own.
  if (db.isTransaction) throw new Error('rotateRefreshToken must not run inside a transaction')
  const { cte, selects } = grantQueryParts(r.tenantId, sql`(select user_id from ok)`)
  const lifetime = sql`${r.sessionMaxLifetimeSeconds}::integer * interval '1 second'`
  const statement = sql<GrantRow>`
    with async_commit as (
      select set_config('synchronous_commit', ${r.asyncCommit ? 'off' : 'on'}, true)
    ), target as (
      select t.id, t.session_id from refresh_tokens t
      where ${tokenIs(r.lookup, 't')} and t.tenant_id = ${r.tenantId} and t.revoked_at is null
        and t.expires_at > ${r.now} and exists (select 1 from async_commit)
    ), locked as materialized (
      select s.id, least(${r.expiresAt}::timestamptz, s.created_at + ${lifetime}) as ends_at
      from sessions s
      where s.id = (select session_id from target) and s.tenant_id = ${r.tenantId}
        and coalesce(s.revoked_at, 'infinity') = 'infinity' and s.created_at + ${lifetime} > ${r.now}
        and exists (select 1 from users u where u.id = s.user_id and u.status = 'ACTIVE')
      for update of s
    ), consumed as (
      update refresh_tokens t set revoked_at = ${r.now}, rotated_at = ${r.now}, replaced_by = ${r.nextId}
      where t.id = (select id from target) and exists (select 1 from locked) and t.revoked_at is null
      returning t.session_id
    ), sess as (
      update sessions s set last_used_at = ${r.now}, expires_at = (select ends_at from locked),
        ip = ${r.meta.ip}, user_agent = ${r.meta.userAgent}
      where s.id = (select session_id from consumed)
      returning s.id, s.user_id, s.expires_at, s.created_at
    ), successor as (
      insert into refresh_tokens (id, tenant_id, session_id, token_hash, by_selector, created_at, expires_at)
      select ${r.nextId}, ${r.tenantId}, sess.id, ${r.nextHash}, true, ${r.now}, sess.expires_at from sess
      returning id
    ), audit as (
      insert into tessera_audit.audit_log (tenant_id, user_id, action, success, ip_address, user_agent,
        metadata, request_id)
      select ${r.tenantId}, sess.user_id, 'REFRESH_TOKEN', true, ${r.meta.ip}, ${r.meta.userAgent}, '{}'::jsonb,
        ${r.meta.requestId} from sess
      returning id
    ), ok as (
      select sess.id as session_id, sess.user_id, sess.created_at from sess
      where exists (select 1 from successor) and exists (select 1 from audit)
    ), ${cte}
    select 'user' as kind, null as role, json_build_object(
        'session_id', ok.session_id, 'id', u.id, 'email', u.email, 'username', u.username,
        'auth_time', floor(extract(epoch from ok.created_at))::bigint)::text as name,
      0 as level
    from ok join users u on u.id = ok.user_id
    union all
    ${selects}
  `
  // Why retry: a lost deadlock or serialisation failure rolled the whole statement back, so it runs again.
  const { rows } = await retryOnContention(() => statement.execute(db))
  const { user, grants } = userAndGrants<RotatedUser>(rows, r.isPlatform)
  return user ? { user, grants } : undefined
}

/** The user of a rotated refresh token, and the session it belongs to. */
export interface RotatedUser {
  session_id: string
  /** The session's login (its `created_at`), in seconds since the epoch: the new token's `auth_time`. */
  auth_time: number
  id: string
  email: string | null
  username: string | null
}

/** A user's active sessions (neither revoked nor expired), newest first. */
export function listActiveSessions(db: Kysely<Database>, tenantId: string, userId: string, now: Date) {
  return db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_used_at', 'expires_at', 'ip', 'user_agent'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

/** A presented refresh token's row, whatever its state (for reuse detection). */
export function findRefreshToken(db: Kysely<Database>, tenantId: string, lookup: RefreshTokenLookup) {
  return db
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select([
      'refresh_tokens.id',
      'refresh_tokens.session_id',
      'refresh_tokens.rotated_at',
      'refresh_tokens.revoked_at',
      'refresh_tokens.expires_at',
      'sessions.user_id',
      'sessions.revoked_at as session_revoked_at',
    ])
    .where('refresh_tokens.tenant_id', '=', tenantId)
    .where(tokenIs(lookup, 'refresh_tokens'))
    .executeTakeFirst()
}

/** The tenant's active sessions at `now` (tenant metrics). */
export async function countActiveSessions(
  db: Kysely<Database>,
  tenantId: string,
  now: Date,
): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The session a refresh token belongs to, when it is this user's (whatever the token's own state). */
export function findSessionOfToken(
  db: Kysely<Database>,
  p: { tenantId: string; userId: string; lookup: RefreshTokenLookup },
) {
  return db
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select(['refresh_tokens.session_id'])
    .where('refresh_tokens.tenant_id', '=', p.tenantId)
    .where(tokenIs(p.lookup, 'refresh_tokens'))
    .where('sessions.tenant_id', '=', p.tenantId)
    .where('sessions.user_id', '=', p.userId)
    .executeTakeFirst()
}

/** The id of one of the user's sessions when it is active at `now`, or undefined. */
export function findActiveSession(
  db: Kysely<Database>,
  p: { tenantId: string; userId: string; sessionId: string; now: Date },
) {
  return db
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', p.tenantId)
    .where('user_id', '=', p.userId)
    .where('id', '=', p.sessionId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', p.now)
    .executeTakeFirst()
}

/**
 * Whether the user exists, and the login time (seconds since the epoch, as `auth_time` is minted) of the
 * session `sessionId` when it is live now: of this user, not revoked, not expired. One statement; the
 * recent-sign-in check reads it (contract section 26).
 */
export async function liveSessionLogin(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<LiveSession> {
  // Why a raw statement from users: a user deleted since its token was issued is told apart from a
  // session that is not live (the caller answers 404 where the operation declares it), in the same trip.
  const { rows } = await sql<{ login_at: string | number | null }>`
    select (select floor(extract(epoch from s.created_at))::bigint from sessions s
             where s.tenant_id = u.tenant_id and s.id = ${sessionId} and s.user_id = u.id
               and s.revoked_at is null and s.expires_at > ${now}) as login_at
      from users u where u.tenant_id = ${tenantId} and u.id = ${userId}`.execute(db)
  const row = rows[0]
  if (!row) return { userExists: false, loginAt: undefined }
  return { userExists: true, loginAt: row.login_at === null ? undefined : Number(row.login_at) }
}
