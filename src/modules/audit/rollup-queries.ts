import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { notStoppedAtSecondFactor } from './login-stats-queries.js'

// The hourly rollup of the audit log (migration 0014): closed hours counted once per tenant and action,
// so GET /auth-logs/stats reads at most 24 rows per action and day instead of every audit row.

/** The tenant's counted range of hours, or undefined when nothing has been counted yet. No lock. */
export function findRollupMark(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('audit_rollup_marks')
    .select(['covered_from', 'covered_to'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst()
}

/**
 * The tenant's counted range, locked FOR UPDATE so that two callers never count the same hours; a tenant
 * with none gets an empty range at `at` first.
 */
export async function lockRollupMark(trx: Transaction<Database>, tenantId: string, at: Date) {
  await trx
    .insertInto('audit_rollup_marks')
    .values({ tenant_id: tenantId, covered_from: at, covered_to: at })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute()
  return trx
    .selectFrom('audit_rollup_marks')
    .select(['covered_from', 'covered_to'])
    .where('tenant_id', '=', tenantId)
    .forUpdate()
    .executeTakeFirstOrThrow()
}

/** Counts the tenant's audit rows of [from, to) per UTC hour and action into audit_hourly_counts. */
export async function countHoursInto(trx: Transaction<Database>, tenantId: string, from: Date, to: Date) {
  await sql`insert into audit_hourly_counts (tenant_id, hour, action, success, failure)
    select tenant_id, date_trunc('hour', created_at, 'UTC'), action,
      count(*) filter (where success), count(*) filter (where not success)
    from tessera_audit.audit_log
    where tenant_id = ${tenantId} and created_at >= ${from} and created_at < ${to} and ${notStoppedAtSecondFactor}
    group by 1, 2, 3
    on conflict (tenant_id, hour, action) do nothing`.execute(trx)
}

/** Records that the tenant's hours of [from, to) are counted. */
export async function setRollupMark(trx: Transaction<Database>, tenantId: string, from: Date, to: Date) {
  await trx
    .updateTable('audit_rollup_marks')
    .set({ covered_from: from, covered_to: to })
    .where('tenant_id', '=', tenantId)
    .execute()
}

/** The counted hours of [from, to) summed per UTC `bucket` and action. */
export async function sumHourlyCounts(
  db: Kysely<Database>,
  tenantId: string,
  bucket: 'hour' | 'day',
  from: Date,
  to: Date,
) {
  // sql.lit: the unit is one of two literals, so the grouping expression is a constant.
  const start = sql<Date>`date_trunc(${sql.lit(bucket)}, hour, 'UTC')`
  const rows = await db
    .selectFrom('audit_hourly_counts')
    .select([
      start.as('start'),
      'action',
      sql<string>`sum(success)`.as('success'),
      sql<string>`sum(failure)`.as('failure'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('hour', '>=', from)
    .where('hour', '<', to)
    .groupBy([start, 'action'])
    .execute()
  return rows.map((r) => ({
    start: new Date(r.start),
    action: r.action,
    success: Number(r.success),
    failure: Number(r.failure),
  }))
}

/**
 * Retention: forgets the counts of hours that begin before the first whole hour after `days` ago (by the
 * database's clock, as the audit rows' own sweep), so no count outlives the rows it was made from.
 */
export async function trimRollups(db: Kysely<Database>, days: number): Promise<void> {
  const edge = sql`(date_trunc('hour', now() - make_interval(days => ${days}::integer), 'UTC') + interval '1 hour')`
  await sql`delete from audit_hourly_counts where hour < ${edge}`.execute(db)
  await sql`delete from audit_rollup_marks where covered_to <= ${edge}`.execute(db)
  await sql`update audit_rollup_marks set covered_from = ${edge} where covered_from < ${edge}`.execute(db)
}

/** Relocation: the tenant's counts go (derived data: the database the tenant moves to counts anew). */
export async function purgeRollups(trx: Kysely<Database>, tenantId: string): Promise<void> {
  await trx.deleteFrom('audit_hourly_counts').where('tenant_id', '=', tenantId).execute()
  await trx.deleteFrom('audit_rollup_marks').where('tenant_id', '=', tenantId).execute()
}
