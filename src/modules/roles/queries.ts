import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { adminPermissions } from '../permissions/effective.js'

export const roleColumns = [
  'roles.id',
  'roles.tenant_id',
  'roles.name',
  'roles.description',
  'roles.level',
  'roles.is_system',
  'roles.created_at',
  'roles.updated_at',
] as const

/** Roles of the tenant by name. */
export function findRolesByName(db: Kysely<Database>, tenantId: string, names: readonly string[]) {
  if (names.length === 0) return Promise.resolve([])
  return db
    .selectFrom('roles')
    .select(roleColumns)
    .where('tenant_id', '=', tenantId)
    .where('name', 'in', [...names])
    .execute()
}

/** Names of every permission that exists in the tenant (built-in and custom). */
export async function existingPermissionNames(db: Kysely<Database>, tenantId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('permissions')
    .select('name')
    .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
    .execute()
  return rows.map((r) => r.name)
}

/**
 * Permission names per role id. The built-in admin role's set is derived (every permission that
 * exists in the tenant), so permissions created later are included without touching its rows.
 */
export async function permissionsOfRoles(
  db: Kysely<Database>,
  tenantId: string,
  roles: readonly { id: string; name: string; is_system: boolean }[],
  isPlatform: boolean,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(roles.map((r) => [r.id, []]))
  if (roles.length === 0) return out
  const rows = await db
    .selectFrom('role_permissions')
    .innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
    .select(['role_permissions.role_id', 'permissions.name'])
    .where('role_permissions.tenant_id', '=', tenantId)
    .where(
      'role_permissions.role_id',
      'in',
      roles.map((r) => r.id),
    )
    .orderBy('permissions.name')
    .execute()
  for (const r of rows) out.get(r.role_id)?.push(r.name)
  const admin = roles.find((r) => r.is_system && r.name === 'admin')
  if (admin) {
    const derived = adminPermissions(await existingPermissionNames(db, tenantId), isPlatform)
    out.set(admin.id, [...new Set([...(out.get(admin.id) ?? []), ...derived])].sort())
  }
  return out
}
