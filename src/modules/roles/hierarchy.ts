import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import { holds, isSuperAdmin, type Principal } from '../../auth/principal.js'
import { loadGrants } from '../permissions/effective.js'

/**
 * The hierarchy rule of contract section 6, in one place. Every act it names calls one of these:
 * role assign/remove, role create/update and its permission changes, direct grant/revoke, user
 * PATCH/DELETE, and the roles given at register.
 */

const violation = (why: string) => new AppError('ROLE_HIERARCHY_VIOLATION', why)

/** The caller's rank: highest level among its roles as stored now; keys have none. */
export async function rankOf(db: Kysely<Database>, actor: Principal): Promise<number | null> {
  if (actor.kind !== 'user') return null
  return (await loadGrants(db, actor.tenantId, actor.userId, actor.isPlatform)).rank
}

/** Containment: every permission must be held by the caller's own credential set. */
export function assertContains(actor: Principal, permissions: readonly string[]): void {
  if (isSuperAdmin(actor)) return
  const missing = permissions.filter((p) => !holds(actor.permissions, p))
  if (missing.length > 0) throw violation(`The caller does not hold: ${missing.join(', ')}`)
}

/** May the caller give (assign, create or edit) a role of this level carrying these permissions? */
export async function assertMayGiveRole(
  db: Kysely<Database>,
  actor: Principal,
  role: { level: number; permissions: readonly string[] },
): Promise<void> {
  if (isSuperAdmin(actor)) return
  assertContains(actor, role.permissions)
  const rank = await rankOf(db, actor)
  if (rank !== null && role.level > rank) throw violation('The role is above the caller’s level')
}

/**
 * May the caller act on another user (remove a role from, grant to, revoke from, PATCH, DELETE)?
 * Users: the target's rank must be strictly below the caller's. Keys: the target's effective
 * permissions must all lie within the key's scopes.
 */
export async function assertMayActOnUser(
  db: Kysely<Database>,
  actor: Principal,
  target: { tenantId: string; userId: string; isPlatform: boolean },
): Promise<void> {
  if (isSuperAdmin(actor)) return
  const grants = await loadGrants(db, target.tenantId, target.userId, target.isPlatform)
  if (actor.kind === 'client_key') {
    const outside = grants.permissions.filter((p) => !holds(actor.permissions, p))
    if (outside.length > 0) throw violation('The target user holds permissions outside the key’s scopes')
    return
  }
  const rank = (await rankOf(db, actor)) ?? -1
  if (!(grants.rank < rank)) throw violation('The target user is not below the caller’s level')
}
