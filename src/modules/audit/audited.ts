import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import type { Principal } from '../../security/principal.js'
import { writeAudit, type AuditAction, type RequestMeta } from './write.js'

/** What an audited act learns as it goes and the row records: the target user and the names involved. */
export interface AuditNote {
  /** The user the event is about; set once it is known to exist in the tenant. */
  userId: string | null
  metadata: { role?: string; permission?: string; sessionsRevoked?: number }
}

/**
 * Runs one audited act (ROLE_ASSIGN, ROLE_REMOVE, PERMISSION_GRANT, PERMISSION_REVOKE, USER_DELETE, the
 * account-lifecycle acts) in a transaction and writes exactly one audit row: the success row inside that
 * transaction, so the change and its row commit together; on any failure, after the rollback, a failure
 * row through `db` (commit, then fail), whose loss never hides the original error.
 *
 * `before` runs first, outside the transaction, under the same audit: work that must not hold a
 * connection or a row lock (a bcrypt hash, a Redis call) or that needs no transaction.
 */
export async function audited<T>(
  db: Kysely<Database>,
  e: { tenantId: string; action: AuditAction; actor: Principal; meta: RequestMeta; note: AuditNote },
  run: (trx: Transaction<Database>, note: AuditNote) => Promise<T>,
  before?: (note: AuditNote) => Promise<void>,
): Promise<T> {
  const { note } = e
  try {
    if (before) await before(note)
    return await db.transaction().execute(async (trx) => {
      const out = await run(trx, note)
      await writeAudit(trx, {
        tenantId: e.tenantId,
        action: e.action,
        success: true,
        userId: note.userId,
        actor: e.actor,
        metadata: note.metadata,
        meta: e.meta,
      })
      return out
    })
  } catch (err) {
    const known = err instanceof AppError
    await writeAudit(db, {
      tenantId: e.tenantId,
      action: e.action,
      success: false,
      userId: note.userId,
      actor: e.actor,
      errorMessage: known ? err.code : 'INTERNAL_ERROR',
      metadata: known ? { ...note.metadata, reason: err.message } : note.metadata,
      meta: e.meta,
    }).catch(() => undefined)
    throw err
  }
}
