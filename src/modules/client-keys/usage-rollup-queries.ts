import { sql, type Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

// The hourly rollup of Client Key usage (migration 0022, docs/decisions.md D29): a key's closed hours are
// counted once, so GET /client-keys/{id}/stats sums a few rows per hour and reads only the rows since.

/** Why 15 minutes: a buffered usage row reaches the table seconds after its request, never this late. */
const SETTLE_MS = 15 * 60_000

/** The start of the latest hour that ended at least 15 minutes before `nowMs`: counted up to there. */
export function countableUntil(nowMs: number): Date {
  const settled = nowMs - SETTLE_MS
  return new Date(settled - (settled % 3_600_000))
}

/** A mark's time in ms; -Infinity for '-infinity' (nothing counted yet), whichever way the driver gives it. */
const timeOf = (v: Date | string | number | undefined): number => {
  const ms = v === undefined ? NaN : new Date(v).getTime()
  return Number.isNaN(ms) ? -Infinity : ms
}

/** Status classes of a usage row, as counted. */
const classes = sql`count(*) filter (where status_code between 200 and 299)::int as s2,
  count(*) filter (where status_code between 400 and 499)::int as s4,
  count(*) filter (where status_code between 500 and 599)::int as s5`

/**
 * The key's usage: counted hours plus the rows since its mark, totals per route (`whole` the sum) and the
 * rows of the last 24 hours; and where its mark stands. One statement.
 */
export async function usageStats(db: Kysely<Database>, tenantId: string, keyId: string, since: Date) {
  const { rows } = await sql<{
    whole: boolean
    route: string | null
    total: number
    s2: number
    s4: number
    s5: number
    recent: number
    covered_to: Date | string | number
  }>`
    with edge as (
      select coalesce((select covered_to from client_key_usage_marks where key_id = ${keyId}),
        '-infinity'::timestamptz) as at
    ), counted as (
      select route, total, s2, s4, s5 from client_key_usage_hourly where key_id = ${keyId}
      union all
      select route, count(*)::int, ${classes} from client_key_usage
      where key_id = ${keyId} and tenant_id = ${tenantId} and created_at >= (select at from edge)
      group by route
    )
    select grouping(route) = 1 as whole, route, sum(total)::int as total, sum(s2)::int as s2,
      sum(s4)::int as s4, sum(s5)::int as s5,
      (select count(*)::int from client_key_usage
        where key_id = ${keyId} and tenant_id = ${tenantId} and created_at > ${since}) as recent,
      (select at from edge) as covered_to
    from counted group by grouping sets ((), (route))
  `.execute(db)
  const c = rows.find((r) => r.whole)
  const routes = rows
    .filter((r) => !r.whole)
    .map((r) => ({ route: r.route ?? '', count: Number(r.total) }))
    .sort((a, b) => b.count - a.count || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0))
    .slice(0, 10)
  return {
    total: Number(c?.total ?? 0),
    recent: Number(c?.recent ?? rows[0]?.recent ?? 0),
    s2: Number(c?.s2 ?? 0),
    s4: Number(c?.s4 ?? 0),
    s5: Number(c?.s5 ?? 0),
    routes,
    coveredToMs: timeOf(c?.covered_to ?? rows[0]?.covered_to),
  }
}

/**
 * Counts the key's rows before `until` that its mark does not cover yet, and moves the mark there, in one
 * transaction under the mark's row lock: two callers never count the same rows, and a reader sees the
 * rows either counted or not, never both.
 */
export async function rollUpKeyUsage(
  db: Kysely<Database>,
  tenantId: string,
  keyId: string,
  until: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`insert into client_key_usage_marks (key_id, covered_to) values (${keyId}, '-infinity')
      on conflict (key_id) do nothing`.execute(trx)
    const { rows } = await sql<{ covered_to: Date | string | number }>`select covered_to
      from client_key_usage_marks where key_id = ${keyId} for update`.execute(trx)
    const fromMs = timeOf(rows[0]?.covered_to)
    if (fromMs >= until.getTime()) return
    const from = fromMs === -Infinity ? '-infinity' : new Date(fromMs).toISOString()
    await sql`insert into client_key_usage_hourly (key_id, hour, route, total, s2, s4, s5)
      select key_id, date_trunc('hour', created_at, 'UTC'), route, count(*)::int, ${classes}
      from client_key_usage
      where key_id = ${keyId} and tenant_id = ${tenantId} and created_at >= ${from}::timestamptz
        and created_at < ${until}
      group by 1, 2, 3
      on conflict (key_id, hour, route) do update set total = client_key_usage_hourly.total + excluded.total,
        s2 = client_key_usage_hourly.s2 + excluded.s2, s4 = client_key_usage_hourly.s4 + excluded.s4,
        s5 = client_key_usage_hourly.s5 + excluded.s5`.execute(trx)
    await sql`update client_key_usage_marks set covered_to = ${until} where key_id = ${keyId}`.execute(trx)
  })
}

/**
 * Retention: forgets the counted hours that begin before the first whole hour after `before`, as the
 * rows they were made from go; the rows of the hour `before` falls in are counted nowhere after that.
 */
export async function trimKeyUsageRollup(db: Kysely<Database>, before: Date): Promise<void> {
  await sql`delete from client_key_usage_hourly
    where hour < date_trunc('hour', ${before}::timestamptz, 'UTC') + interval '1 hour'`.execute(db)
}
