import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { fromKey, keyedBatch } from '../../db/keyed-batch.js'

/** One request made with a key, as the usage log buffers and stores it. */
export interface UsageRow {
  tenantId: string
  keyId: string
  method: string
  route: string
  statusCode: number
  ip: string | null
  origin: string | null
  userAgent: string | null
  /** The request's X-Request-Id, for correlation with the access log and audit rows. */
  requestId: string | null
  /** ISO-8601 with microseconds, so rows of one millisecond still sort in request order. */
  createdAt: string
}

/** Inserts usage rows in one multi-row statement. */
export async function insertUsageRows(
  trx: Transaction<Database> | Kysely<Database>,
  rows: readonly UsageRow[],
) {
  if (rows.length === 0) return
  await trx
    .insertInto('client_key_usage')
    .values(
      rows.map((r) => ({
        tenant_id: r.tenantId,
        key_id: r.keyId,
        method: r.method,
        route: r.route,
        status_code: r.statusCode,
        ip: r.ip,
        origin: r.origin,
        user_agent: r.userAgent,
        request_id: r.requestId,
        created_at: r.createdAt,
      })),
    )
    .execute()
}

/**
 * Moves each key's `last_used_at` forward to the given time (never back: another instance may have
 * written a later one). Keys are updated in id order, so concurrent flushes cannot deadlock.
 */
export async function touchLastUsed(
  trx: Transaction<Database> | Kysely<Database>,
  lastUse: ReadonlyMap<string, string>,
) {
  if (lastUse.size === 0) return
  const entries = [...lastUse.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const values = sql.join(entries.map(([id, at]) => sql`(${id}::uuid, ${at}::timestamptz)`))
  await sql`
    update client_keys as k set last_used_at = v.at
    from (values ${values}) as v(id, at)
    where k.id = v.id and (k.last_used_at is null or k.last_used_at < v.at)
  `.execute(trx)
}

/** One page of a key's usage rows, newest first, with the total. Uses the (key_id, created_at) index. */
export function listUsage(db: Kysely<Database>, tenantId: string, keyId: string, page: PageParams) {
  const q = db
    .selectFrom('client_key_usage')
    .where('key_id', '=', keyId)
    .where('tenant_id', '=', tenantId)
    .select([
      'id',
      'key_id',
      'method',
      'route',
      'status_code',
      'ip',
      'origin',
      'user_agent',
      'request_id',
      'created_at',
    ])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
  return paginate(q, page)
}

/**
 * Retention: up to `batch` usage rows older than `before`, the oldest first from `from` on; how many,
 * and the created_at of the last (the next batch starts there: system/pace.ts).
 */
export async function deleteUsageBefore(
  db: Kysely<Database>,
  p: { before: Date; batch: number; from: Date | null },
): Promise<{ n: number; last: Date | null }> {
  // Why ordered, and from the last batch's end: each batch is an index range scan of the oldest rows by
  // client_key_usage_created_at that starts past what the batches before it deleted. Unordered, the
  // planner took a sequential scan that read every row deleted before it (not yet vacuumed); ordered from
  // the start, the index scan walked their dead entries: either way a backlog's sweep slowed with every
  // batch, until one outlasted the query timeout (make bench-scale, 6.7M rows to go).
  const from = fromKey(sql`created_at`, p.from)
  const { rows } = await sql<{ n: number; last: Date | string | null }>`with picked as (
      select id, created_at from client_key_usage where created_at < ${p.before} and ${from}
      order by created_at limit ${p.batch}
    ), gone as (delete from client_key_usage where id in (select id from picked) returning 1)
    select (select count(*)::int from gone) as n, (select max(created_at) from picked) as last`.execute(db)
  const row = rows[0]
  return keyedBatch(row)
}
