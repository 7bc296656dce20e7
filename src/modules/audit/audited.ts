import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import type { Principal } from '../../security/principal.js'
import { writeAudit, type AuditAction, type RequestMeta } from './write.js'

/** What an audited act learns as it goes and the row records: the target user and the names involved. */
export interface AuditNote {
  /** The user the event is about; set once it is known to exist in the tenant. */
  userId: string | null
  metadata: {
    role?: string
    permission?: string
    sessionsRevoked?: number
    passkeyId?: string
    identityId?: string
  }
}

/**
 * The steps of one audited act, in the order they run: `before` outside the transaction, then `act` in it.
 * `before` holds work that must not hold a connection or a row lock (a bcrypt hash, a Redis call) or that
 * needs no transaction; what it returns is handed to `act`.
 */
export interface AuditedSteps<T, P> {
  readonly before?: (note: AuditNote) => Promise<P>
  readonly act: (trx: Transaction<Database>, note: AuditNote, prepared: P) => Promise<T>
}

/**
 * Runs one audited act (ROLE_ASSIGN, ROLE_REMOVE, PERMISSION_GRANT, PERMISSION_REVOKE, USER_DELETE, the
 * account-lifecycle acts) and writes exactly one audit row: the success row inside `act`'s transaction, so
 * the change and its row commit together; on any failure of either step, after the rollback, a failure
 * row through `db` (commit, then fail), whose loss never hides the original error.
 */
export async function audited<T, P = undefined>(
  db: Kysely<Database>,
  e: { tenantId: string; action: AuditAction; actor: Principal; meta: RequestMeta; note: AuditNote },
  steps: AuditedSteps<T, P>,
): Promise<T> {
  const { note } = e
  try {
    // Why the cast: without `before` there is nothing to hand on, and P is its default, undefined.
    const prepared = steps.before ? await steps.before(note) : (undefined as P)
    return await db.transaction().execute(async (trx) => {
      const out = await steps.act(trx, note, prepared)
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
      // Why cut: the document bounds `reason` (1,024 characters); a message may list many permissions.
      metadata: known
        ? { ...note.metadata, reason: Array.from(err.message).slice(0, 1024).join('') }
        : note.metadata,
      meta: e.meta,
    }).catch(() => undefined)
    throw err
  }
}
