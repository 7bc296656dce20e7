import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../../db/database.js'
import { fromKey, keyedBatch, type KeyedBatch } from '../../db/keyed-batch.js'

// Retention's statements on the sessions and refresh_tokens tables (the authentication module's); the
// batches, the lock and the routed databases are modules/system/retention.ts's.

/**
 * Refresh-token lifetimes in seconds as a derived table `l(tenant_id, secs)` for the sweeps' joins: the
 * given tenants' (a routed database), or `all` (tenants/queries.ts, refreshLifetimes) read in the statement.
 */
export type Lifetimes = RawBuilder<unknown>

/** The lifetimes of these tenants, as read from the main database. */
export function givenLifetimes(ids: readonly string[], secs: readonly number[]): Lifetimes {
  return sql`unnest(${ids}::uuid[], ${secs}::integer[]) as l(tenant_id, secs)`
}

/** A day before `now`, as the statements compare it. */
const dayBefore = (now: Date) => sql`${now}::timestamptz - interval '1 day'`

type Batch = { now: Date; batch: number; from: Date | null }
type Removed = KeyedBatch

/** The count and the last key of a batch: `with picked (key) …, gone (deleted rows) …`. */
async function removed(db: Kysely<Database>, statement: RawBuilder<unknown>): Promise<Removed> {
  const { rows } = await sql<{ n: number; last: Date | string | null }>`${statement}
    select (select count(*)::int from gone) as n, (select max(key) from picked) as last`.execute(db)
  const row = rows[0]
  return keyedBatch(row)
}

/**
 * Up to `batch` revoked sessions whose tenant's refresh-token lifetime and a day have passed since they
 * were revoked: until then a stolen token of theirs is still recognised as reuse. Found by their partial
 * index (migration 0010: no index names a column a refresh writes), in revocation order from `from`.
 */
export function deleteRevokedSessions(
  db: Kysely<Database>,
  p: Batch & { lifetimes: Lifetimes },
): Promise<Removed> {
  const dayAgo = dayBefore(p.now)
  return removed(
    db,
    sql`with picked as (
      select s.id, s.revoked_at as key from sessions s join ${p.lifetimes} on l.tenant_id = s.tenant_id
      where s.revoked_at < ${dayAgo} and ${fromKey(sql`s.revoked_at`, p.from)}
        and s.revoked_at < ${dayAgo} - l.secs * interval '1 second'
      order by s.revoked_at limit ${p.batch}
    ), gone as (delete from sessions where id in (select id from picked) returning 1)`,
  )
}

/**
 * Up to `batch` expired sessions past the same wait, found through their latest refresh token
 * (replaced_by null), whose expiry is the session's and which stays until its session goes; in expiry
 * order from `from`.
 */
export function deleteExpiredSessions(
  db: Kysely<Database>,
  p: Batch & { lifetimes: Lifetimes },
): Promise<Removed> {
  const dayAgo = dayBefore(p.now)
  return removed(
    db,
    sql`with picked as (
      select s.id, t.expires_at as key from refresh_tokens t join sessions s on s.id = t.session_id
        join ${p.lifetimes} on l.tenant_id = s.tenant_id
      where t.expires_at < ${dayAgo} and ${fromKey(sql`t.expires_at`, p.from)}
        and t.replaced_by is null and s.revoked_at is null
        and s.expires_at < ${dayAgo} - l.secs * interval '1 second'
      order by t.expires_at limit ${p.batch}
    ), gone as (delete from sessions where id in (select id from picked) returning 1)`,
  )
}

/**
 * Up to `batch` spent refresh tokens (replaced, expired a day ago), of these tenants only when given, in
 * expiry order from `from`; a session's latest token leaves with its session (on delete cascade).
 */
export function deleteSpentRefreshTokens(
  db: Kysely<Database>,
  p: Batch & { tenantIds?: readonly string[] },
): Promise<Removed> {
  const dayAgo = dayBefore(p.now)
  const only = p.tenantIds ? sql`and ${sql.ref('tenant_id')} = any(${p.tenantIds}::uuid[])` : sql``
  return removed(
    db,
    sql`with picked as (
      select id, expires_at as key from refresh_tokens
      where expires_at < ${dayAgo} and ${fromKey(sql`expires_at`, p.from)} and replaced_by is not null ${only}
      order by expires_at limit ${p.batch}
    ), gone as (delete from refresh_tokens where id in (select id from picked) returning 1)`,
  )
}
