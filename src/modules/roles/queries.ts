import { sql, type Kysely, type Selectable, type Transaction } from 'kysely'
import type { Database, RolesTable, Unqualified } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { adminPermissions } from '../../security/grants.js'
import { existingPermissionNames } from '../permissions/queries.js'

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

/** A role row as `roleColumns` selects it. */
export type RoleRow = Pick<Selectable<RolesTable>, Unqualified<(typeof roleColumns)[number]>>

/** The `Role` object of the document (openapi/components/roles.yaml). */
export function toRoleDto(row: RoleRow, permissions: string[]) {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    level: Number(row.level),
    permissions,
    isSystem: row.is_system,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  }
}

/** One page of the tenant's roles, newest first, with the total. */
export function listRoles(db: Kysely<Database>, tenantId: string, page: PageParams) {
  const q = db
    .selectFrom('roles')
    .select(roleColumns)
    .where('roles.tenant_id', '=', tenantId)
    .orderBy('roles.created_at', 'desc')
    .orderBy('roles.name', 'asc')
  return paginate(q, page)
}

function roleById(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .selectFrom('roles')
    .select(roleColumns)
    .where('roles.tenant_id', '=', tenantId)
    .where('roles.id', '=', id)
}

/** One role of the tenant by id (another tenant's id gives undefined). */
export function findRoleById(db: Kysely<Database>, tenantId: string, id: string) {
  return roleById(db, tenantId, id).executeTakeFirst()
}

/** Locks one role of the tenant (FOR UPDATE) until the transaction ends; undefined like findRoleById. */
export function lockRole(trx: Transaction<Database>, tenantId: string, id: string) {
  return roleById(trx, tenantId, id).forUpdate().executeTakeFirst()
}

/** One role of the tenant by name. */
export function findRoleByName(db: Kysely<Database>, tenantId: string, name: string) {
  return db
    .selectFrom('roles')
    .select(roleColumns)
    .where('roles.tenant_id', '=', tenantId)
    .where('roles.name', '=', name)
    .executeTakeFirst()
}

/** Inserts a custom role; a unique violation means the name is taken in the tenant. */
export function insertRole(
  db: Kysely<Database>,
  tenantId: string,
  r: { name: string; description: string | null; level: number },
) {
  return db
    .insertInto('roles')
    .values({
      tenant_id: tenantId,
      name: r.name,
      description: r.description,
      level: r.level,
      is_system: false,
    })
    .returning(roleColumns)
    .executeTakeFirstOrThrow()
}

/** Changes a role's name, description or level and touches updated_at. */
export function updateRole(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  r: { name?: string; description?: string | null; level?: number },
) {
  return db
    .updateTable('roles')
    .set({ ...r, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(roleColumns)
    .executeTakeFirstOrThrow()
}

/** Touches a role's updated_at (after a change of its permissions). */
export function touchRole(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .updateTable('roles')
    .set({ updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(roleColumns)
    .executeTakeFirstOrThrow()
}

/** Deletes a role of the tenant; its assignments and permission rows cascade. */
export async function deleteRole(db: Kysely<Database>, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('roles').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Adds permission rows to a role; ones it already has are kept. */
export async function addRolePermissionRows(
  db: Kysely<Database>,
  tenantId: string,
  roleId: string,
  permissionIds: readonly string[],
): Promise<void> {
  if (permissionIds.length === 0) return
  await db
    .insertInto('role_permissions')
    .values(permissionIds.map((id) => ({ tenant_id: tenantId, role_id: roleId, permission_id: id })))
    .onConflict((oc) => oc.columns(['role_id', 'permission_id']).doNothing())
    .execute()
}

/** Removes permission rows from a role; ones it does not have are ignored. */
export async function removeRolePermissionRows(
  db: Kysely<Database>,
  tenantId: string,
  roleId: string,
  permissionIds: readonly string[],
): Promise<void> {
  if (permissionIds.length === 0) return
  await db
    .deleteFrom('role_permissions')
    .where('tenant_id', '=', tenantId)
    .where('role_id', '=', roleId)
    .where('permission_id', 'in', [...permissionIds])
    .execute()
}

/** Gives a user a role; giving one it holds changes nothing. */
export async function insertUserRole(db: Kysely<Database>, tenantId: string, userId: string, roleId: string) {
  await db
    .insertInto('user_roles')
    .values({ tenant_id: tenantId, user_id: userId, role_id: roleId })
    .onConflict((oc) => oc.columns(['user_id', 'role_id']).doNothing())
    .execute()
}

/** Takes a role from a user; taking one it does not hold changes nothing. */
export async function deleteUserRole(db: Kysely<Database>, tenantId: string, userId: string, roleId: string) {
  await db
    .deleteFrom('user_roles')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('role_id', '=', roleId)
    .execute()
}

/** The tenant's roles, built-in ones included (tenant metrics). */
export async function countRoles(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('roles')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Gives a new user these roles, in one statement (nothing for none). */
export async function insertUserRoles(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<void> {
  if (roleIds.length === 0) return
  await db
    .insertInto('user_roles')
    .values(roleIds.map((roleId) => ({ tenant_id: tenantId, user_id: userId, role_id: roleId })))
    .execute()
}

/** Creates the built-in `admin` (level 100) and `user` (level 0) roles of a tenant. */
export async function insertBuiltinRoles(trx: Transaction<Database> | Kysely<Database>, tenantId: string) {
  return trx
    .insertInto('roles')
    .values([
      {
        tenant_id: tenantId,
        name: 'admin',
        description: 'Tenant administrator',
        level: 100,
        is_system: true,
      },
      {
        tenant_id: tenantId,
        name: 'user',
        description: 'Default role of registered users',
        level: 0,
        is_system: true,
      },
    ])
    .returning(['id', 'name'])
    .execute()
}

/** Role names per user, for building user objects of a page in one query. */
export async function roleNamesOf(db: Kysely<Database>, tenantId: string, userIds: string[]) {
  const out = new Map<string, string[]>()
  if (userIds.length === 0) return out
  const rows = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(['user_roles.user_id', 'roles.name'])
    .where('user_roles.tenant_id', '=', tenantId)
    .where('user_roles.user_id', 'in', userIds)
    .orderBy('roles.name')
    .execute()
  for (const r of rows) out.set(r.user_id, [...(out.get(r.user_id) ?? []), r.name])
  return out
}
