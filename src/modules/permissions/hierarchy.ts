import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import { holds, isSuperAdmin, type Principal } from '../../security/principal.js'
import { loadGrants } from './grant-queries.js'

/**
 * The hierarchy rule (docs/decisions.md D2), in one place. Every act it names calls into this file:
 * role assign (assertMayGiveRole + assertMayActOnUser for keys), role remove, direct grant and revoke,
 * user PATCH and DELETE (assertMayActOnUser), role create, update, delete and permission changes
 * (assertMayGiveRole with the role as it is after the change), and the roles given at register.
 *
 * - Containment uses the credential's own set (the access token's claims as issued; a key's scopes).
 * - Rank uses the caller's roles as stored now: the highest `level` among them (-1 with no role).
 * - Holders of `admin:*` (platform principals only) are exempt from all of it.
 * - `admin:*` itself can be given only inside the platform tenant (assertGivable, FORBIDDEN), even by
 *   an exempt caller.
 *
 * Pass the transaction that makes the change, so the ranks read are the ones it commits against.
 */

const violation = (why: string) => new AppError('ROLE_HIERARCHY_VIOLATION', why)

/** The caller's rank: highest level among its roles as stored now; keys have none (null). */
export async function rankOf(db: Kysely<Database>, actor: Principal): Promise<number | null> {
  if (actor.kind !== 'user') return null
  return (await loadGrants(db, actor.tenantId, actor.userId, actor.isPlatform)).rank
}

/** `admin:*` may be given (to a user, a role or a key) only inside the platform tenant: else FORBIDDEN. */
export function assertGivable(actor: Principal, permissions: readonly string[]): void {
  if (!actor.isPlatform && permissions.includes('admin:*')) {
    throw new AppError('FORBIDDEN', 'admin:* can only be given inside the platform tenant')
  }
}

/** Containment: every permission must be held by the caller's own credential set. */
export function assertContains(actor: Principal, permissions: readonly string[]): void {
  if (isSuperAdmin(actor)) return
  const missing = [...new Set(permissions)].filter((p) => !holds(actor.permissions, p))
  if (missing.length > 0) throw violation(`The caller does not hold: ${missing.join(', ')}`)
}

/**
 * May the caller give a role of this level carrying these permissions: assign it, or create or edit
 * it so that it ends up like this? Containment of the permissions, and for a user caller `level` at
 * most its rank. For an edit pass the higher of the role's former and new level: a caller may
 * neither touch a role above it nor lift one above it.
 */
export async function assertMayGiveRole(
  db: Kysely<Database>,
  actor: Principal,
  role: { level: number; permissions: readonly string[] },
): Promise<void> {
  if (isSuperAdmin(actor)) return
  assertContains(actor, role.permissions)
  const rank = await rankOf(db, actor)
  if (actor.kind === 'user' && role.level > (rank ?? -1)) {
    throw violation('The role is above the caller’s level')
  }
}

/**
 * May the caller act on this user (remove a role from, grant to, revoke from, PATCH, DELETE)? A user
 * caller: the target's rank must be strictly below its own, except on itself (the rule names acts on
 * another user, and a user may always remove its own roles). A Client Key: the target's effective
 * permissions must all lie within the key's scopes. Also used for assign when the caller is a key.
 */
export async function assertMayActOnUser(
  db: Kysely<Database>,
  actor: Principal,
  target: { tenantId: string; userId: string; isPlatform: boolean },
): Promise<void> {
  if (isSuperAdmin(actor)) return
  if (actor.kind === 'user' && actor.userId === target.userId && actor.tenantId === target.tenantId) return
  const grants = await loadGrants(db, target.tenantId, target.userId, target.isPlatform)
  if (actor.kind === 'client_key') {
    const outside = grants.permissions.filter((p) => !holds(actor.permissions, p))
    if (outside.length > 0) throw violation('The target user holds permissions outside the key’s scopes')
    return
  }
  const rank = (await rankOf(db, actor)) ?? -1
  if (!(grants.rank < rank)) throw violation('The target user is not below the caller’s level')
}
