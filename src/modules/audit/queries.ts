import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import type { AuditAction } from './write.js'

export interface AuditFilter {
  action?: AuditAction
  success?: boolean
  since?: Date
  userId?: string
  ip?: string
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
