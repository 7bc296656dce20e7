import { sql, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'

// The two writes this module makes to a user row. Why here and not in users/queries.ts: they exist only
// for email, and keeping them apart keeps the users module unchanged.

/** Sets email_verified on a user of the tenant. */
export async function markEmailVerified(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ email_verified: true, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute()
}

/**
 * A user PATCH's changes with `email_verified` cleared when `email` changes (unless the same PATCH sets
 * it): a new address is not proven, and its verification tokens are void anyway.
 */
export function clearVerifiedOnEmailChange<T extends { email?: string | null; email_verified?: boolean }>(
  current: { email: string | null },
  changes: T,
): T {
  const changed =
    changes.email !== undefined && (changes.email ?? '').toLowerCase() !== (current.email ?? '').toLowerCase()
  if (!changed || changes.email_verified !== undefined) return changes
  return { ...changes, email_verified: false }
}
