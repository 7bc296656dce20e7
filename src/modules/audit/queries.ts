import { sql, type Insertable, type Kysely } from 'kysely'
import type { AuditAction, AuditLogTable, Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { keyedBatch } from '../../db/keyed-batch.js'

/** Appends one audit row (through the handle given: the change's transaction, or one outside it). */
export async function insertAuditRow(db: Kysely<Database>, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('tessera_audit.audit_log').values(row).execute()
}

export interface AuditFilter {
  action?: AuditAction
  success?: boolean
  since?: Date
  userId?: string
  ip?: string
  /** The user or Client Key that acted (section 25). */
  actorId?: string
  /** The object of an administrative event (section 25's `metadata.target.id`). */
  targetId?: string
}

/** One page of the tenant's audit rows, newest first, with the total matching the filter. */
export async function listAuditRows(
  db: Kysely<Database>,
  tenantId: string,
  f: AuditFilter,
  page: PageParams,
) {
  let q = db.selectFrom('tessera_audit.audit_log').where('tenant_id', '=', tenantId)
  if (f.action) q = q.where('action', '=', f.action)
  if (f.success !== undefined) q = q.where('success', '=', f.success)
  if (f.since) q = q.where('created_at', '>=', f.since)
  if (f.userId) q = q.where('user_id', '=', f.userId)
  if (f.ip) q = q.where('ip_address', '=', f.ip)
  if (f.actorId) q = q.where('actor_id', '=', f.actorId)
  if (f.targetId) q = q.where(sql`metadata -> 'target' ->> 'id'`, '=', f.targetId)
  const rows = await paginate(q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), page)
  return {
    ...rows,
    items: rows.items.map((r) => ({
      id: r.id,
      tenant_id: r.tenant_id,
      user_id: r.user_id,
      action: r.action as AuditAction,
      success: r.success,
      error_message: r.error_message,
      ip_address: r.ip_address,
      user_agent: r.user_agent,
      request_id: r.request_id,
      created_at: new Date(r.created_at).toISOString(),
      actor_type: r.actor_type as 'user' | 'client_key' | null,
      actor_id: r.actor_id,
      metadata: (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : (r.metadata ?? {})) as Record<
        string,
        string
      >,
    })),
  }
}

/**
 * Retention: up to `batch` audit rows older than `days` days by the database's clock, the oldest first
 * from `from` on, through the audit owner's function (docs/decisions.md D17, migration 0021), which
 * refuses a cutoff inside the database's own period. How many, and the created_at of the last.
 */
export async function expireAuditRows(
  db: Kysely<Database>,
  p: { days: number; batch: number; from: Date | null },
): Promise<{ n: number; last: Date | null }> {
  const r = await sql<{ n: string; last: Date | string | null }>`select removed as n, last
    from tessera_audit.expire_from(now() - make_interval(days => ${p.days}::integer), ${p.batch}::integer,
      ${p.from}::timestamptz)`.execute(db)
  const row = r.rows[0]
  return keyedBatch(row)
}

/** The database's own audit retention period (null: kept), and whether the connected role may change it. */
export async function findAuditRetention(db: Kysely<Database>) {
  const { rows } = await sql<{ days: number | null; can: boolean }>`select s.retention_days as days,
    has_table_privilege('tessera_audit.settings', 'UPDATE') as can from tessera_audit.settings s`.execute(db)
  return rows[0]
}

/** Sets the database's audit retention period (only a role that may: see findAuditRetention). */
export async function setAuditRetentionDays(db: Kysely<Database>, days: number): Promise<void> {
  await sql`select tessera_audit.set_retention_days(${days}::integer)`.execute(db)
}
