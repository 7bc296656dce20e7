import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import { holds, isSuperAdmin, type Principal } from '../../security/principal.js'
import { assertMayGiveRole } from '../permissions/hierarchy.js'
import { findRolesByName, permissionsOfRoles, type RoleRow } from '../roles/queries.js'

// A publishable key's defaultRoles (contract section 20): a sign-up must never make anyone who can
// manage users, roles, tenants or keys. The rule is applied when a key is given the roles, and again at
// every sign-up, since a role may have gained permissions since.

/** Permissions no default role may carry: `admin:*` and anything on users, roles, tenants or keys. */
export function isManagementPermission(name: string): boolean {
  return (
    name === 'admin:*' ||
    name.startsWith('users:') ||
    name.startsWith('roles:') ||
    name.startsWith('tenants:') ||
    name.startsWith('client-keys:')
  )
}

/** The roles by name with their permissions now; `missing` when a name is no role of the tenant. */
async function rolesWithPermissions(
  db: Kysely<Database>,
  tenant: { id: string; isPlatform: boolean },
  names: readonly string[],
) {
  const roles = await findRolesByName(db, tenant.id, names)
  const perms = await permissionsOfRoles(db, tenant.id, roles, tenant.isPlatform)
  return { roles, perms, missing: roles.length !== new Set(names).size }
}

/** FORBIDDEN when a role carries a management permission (see isManagementPermission). */
function assertNoManagement(roles: readonly RoleRow[], perms: Map<string, string[]>): void {
  for (const r of roles) {
    if ((perms.get(r.id) ?? []).some(isManagementPermission))
      throw new AppError('FORBIDDEN', `Role ${r.name} holds a permission a sign-up may not give`)
  }
}

/**
 * At creation or edit: every name is a role of the caller's tenant (ROLE_NOT_FOUND), none carries a
 * management permission and the caller holds every permission of each (FORBIDDEN), and the caller may
 * assign each by the hierarchy rule (ROLE_HIERARCHY_VIOLATION: for a user, no level above its rank).
 * Why the hierarchy too: a key hands its roles to everyone who signs up, so giving them to a key is
 * assigning them, and must not let a caller give roles it could not assign itself (contract section 26).
 */
export async function assertGivableDefaultRoles(
  db: Kysely<Database>,
  actor: Principal,
  names: readonly string[],
): Promise<void> {
  if (names.length === 0) return
  const { roles, perms, missing } = await rolesWithPermissions(
    db,
    { id: actor.tenantId, isPlatform: actor.isPlatform },
    names,
  )
  if (missing) fail('ROLE_NOT_FOUND')
  assertNoManagement(roles, perms)
  if (isSuperAdmin(actor)) return
  for (const r of roles) {
    const lacking = (perms.get(r.id) ?? []).filter((p) => !holds(actor.permissions, p))
    if (lacking.length > 0) throw new AppError('FORBIDDEN', `The caller does not hold: ${lacking.join(', ')}`)
  }
  for (const r of roles)
    await assertMayGiveRole(db, actor, { level: r.level, permissions: perms.get(r.id) ?? [] })
}

/**
 * At sign-up: the key's roles as they are now. Fails closed (FORBIDDEN) when one is gone or has gained a
 * management permission since the key was given it: the sign-up is refused, never granted more.
 */
export async function signupRoles(
  db: Kysely<Database>,
  tenant: { id: string; isPlatform: boolean },
  names: readonly string[],
): Promise<RoleRow[]> {
  if (names.length === 0) return []
  const { roles, perms, missing } = await rolesWithPermissions(db, tenant, names)
  if (missing) fail('FORBIDDEN', 'A default role of the key no longer exists')
  assertNoManagement(roles, perms)
  return roles
}
