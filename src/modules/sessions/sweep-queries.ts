import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../../db/database.js'

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

const affected = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0)

/**
 * Up to `batch` revoked sessions whose tenant's refresh-token lifetime and a day have passed since they
 * were revoked: until then a stolen token of theirs is still recognised as reuse. Found by their partial
 * index (migration 0010: no index names a column a refresh writes).
 */
export async function deleteRevokedSessions(
  db: Kysely<Database>,
  p: { now: Date; lifetimes: Lifetimes; batch: number },
): Promise<number> {
  const dayAgo = dayBefore(p.now)
  return affected(
    await sql`delete from sessions where id in (
      select s.id from sessions s join ${p.lifetimes} on l.tenant_id = s.tenant_id
      where s.revoked_at < ${dayAgo} and s.revoked_at < ${dayAgo} - l.secs * interval '1 second'
      limit ${p.batch})`.execute(db),
  )
}

/**
 * Up to `batch` expired sessions past the same wait, found through their latest refresh token
 * (replaced_by null), whose expiry is the session's and which stays until its session goes.
 */
export async function deleteExpiredSessions(
  db: Kysely<Database>,
  p: { now: Date; lifetimes: Lifetimes; batch: number },
): Promise<number> {
  const dayAgo = dayBefore(p.now)
  return affected(
    await sql`delete from sessions where id in (
      select s.id from refresh_tokens t join sessions s on s.id = t.session_id
        join ${p.lifetimes} on l.tenant_id = s.tenant_id
      where t.expires_at < ${dayAgo} and t.replaced_by is null and s.revoked_at is null
        and s.expires_at < ${dayAgo} - l.secs * interval '1 second'
      limit ${p.batch})`.execute(db),
  )
}

/**
 * Up to `batch` spent refresh tokens (replaced, expired a day ago), of these tenants only when given; a
 * session's latest token leaves with its session (on delete cascade).
 */
export async function deleteSpentRefreshTokens(
  db: Kysely<Database>,
  p: { now: Date; batch: number; tenantIds?: readonly string[] },
): Promise<number> {
  const dayAgo = dayBefore(p.now)
  const only = p.tenantIds ? sql`and ${sql.ref('tenant_id')} = any(${p.tenantIds}::uuid[])` : sql``
  return affected(
    await sql`delete from refresh_tokens where id in (
      select id from refresh_tokens where expires_at < ${dayAgo} and replaced_by is not null
        ${only} limit ${p.batch})`.execute(db),
  )
}
