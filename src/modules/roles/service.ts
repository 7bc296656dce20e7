import type { Kysely } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import type { Principal } from '../../security/principal.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { assertPermissionsExist, permissionRows } from '../permissions/queries.js'
import { assertGivable, assertMayGiveRole } from '../permissions/hierarchy.js'
import type { PageParams } from '../../db/paginate.js'
import {
  addRolePermissionRows,
  deleteRole as deleteRoleRow,
  findRoleById,
  insertRole,
  listRoles as listRoleRows,
  lockRole,
  permissionsOfRoles,
  removeRolePermissionRows,
  toRoleDto,
  touchRole,
  updateRole as updateRoleRow,
  type RoleRow,
} from './queries.js'

/** True for the built-in `admin` role, whose permissions are derived, never stored (queries.ts). */
const isAdminRole = (r: RoleRow) => r.is_system && r.name === 'admin'

/** The role's permission names, as the caller's tenant resolves them (admin's derived set included). */
export async function permissionsOf(
  db: Kysely<Database>,
  actor: Principal,
  role: RoleRow,
): Promise<string[]> {
  return (await permissionsOfRoles(db, actor.tenantId, [role], actor.isPlatform)).get(role.id) ?? []
}

async function roleDto(db: Kysely<Database>, actor: Principal, role: RoleRow) {
  return toRoleDto(role, await permissionsOf(db, actor, role))
}

/** GET /roles: one page of the tenant's roles (built-in ones included), with their permissions. */
export async function listRoles(ctx: AppContext, actor: Principal, query: PageParams) {
  const db = tdb(ctx, actor)
  const page = await listRoleRows(db, actor.tenantId, query)
  const perms = await permissionsOfRoles(db, actor.tenantId, page.items, actor.isPlatform)
  return { ...page, items: page.items.map((r) => toRoleDto(r, perms.get(r.id) ?? [])) }
}

/** GET /roles/:id. Another tenant's id is ROLE_NOT_FOUND. */
export async function getRole(ctx: AppContext, actor: Principal, id: string) {
  const db = tdb(ctx, actor)
  const role = (await findRoleById(db, actor.tenantId, id)) ?? fail('ROLE_NOT_FOUND')
  return roleDto(db, actor, role)
}

/** GET /roles/:id/permissions. */
export async function getRolePermissions(ctx: AppContext, actor: Principal, id: string) {
  const db = tdb(ctx, actor)
  const role = (await findRoleById(db, actor.tenantId, id)) ?? fail('ROLE_NOT_FOUND')
  return { roleId: role.id, permissions: await permissionsOf(db, actor, role) }
}

export interface CreateRoleInput {
  name: string
  description?: string | null
  level?: number
  permissions?: string[]
}

/** POST /roles: a custom role; its permissions must exist and the hierarchy rule must allow it. */
export async function createRole(ctx: AppContext, actor: Principal, input: CreateRoleInput) {
  const tenantId = actor.tenantId
  const names = [...new Set(input.permissions ?? [])].sort()
  const level = input.level ?? 0
  try {
    return await tdb(ctx, actor)
      .transaction()
      .execute(async (trx) => {
        await assertPermissionsExist(trx, tenantId, names)
        assertGivable(actor, names)
        await assertMayGiveRole(trx, actor, { level, permissions: names })
        const role = await insertRole(trx, tenantId, {
          name: input.name,
          description: input.description ?? null,
          level,
        })
        const rows = await permissionRows(trx, tenantId, names, true)
        await addRolePermissionRows(
          trx,
          tenantId,
          role.id,
          [...rows.values()].map((r) => r.id),
        )
        return roleDto(trx, actor, role)
      })
  } catch (err) {
    if (isUniqueViolation(err)) fail('ROLE_ALREADY_EXISTS')
    throw err
  }
}

export interface UpdateRoleInput {
  name?: string
  description?: string | null
  level?: number
}

/**
 * PATCH /roles/:id: name, description, level. The built-in roles keep their name and their level
 * (SYSTEM_RESOURCE_PROTECTED): the document fixes `admin` at 100 and `user` at 0 (`RoleLevel`), and
 * every rank comparison leans on them. A user caller may edit only a role at most its rank, and not lift it above.
 */
export async function updateRole(ctx: AppContext, actor: Principal, id: string, input: UpdateRoleInput) {
  const tenantId = actor.tenantId
  try {
    return await tdb(ctx, actor)
      .transaction()
      .execute(async (trx) => {
        const role = (await lockRole(trx, tenantId, id)) ?? fail('ROLE_NOT_FOUND')
        if (role.is_system && input.name !== undefined && input.name !== role.name) {
          fail('SYSTEM_RESOURCE_PROTECTED', 'Built-in roles cannot be renamed')
        }
        if (role.is_system && input.level !== undefined && input.level !== Number(role.level)) {
          fail('SYSTEM_RESOURCE_PROTECTED', 'The level of a built-in role cannot be changed')
        }
        const level = Math.max(Number(role.level), input.level ?? 0)
        await assertMayGiveRole(trx, actor, { level, permissions: await permissionsOf(trx, actor, role) })
        const updated = await updateRoleRow(trx, tenantId, id, input)
        return roleDto(trx, actor, updated)
      })
  } catch (err) {
    if (isUniqueViolation(err)) fail('ROLE_ALREADY_EXISTS')
    throw err
  }
}

/**
 * DELETE /roles/:id: a custom role and its assignments. Built-in roles: SYSTEM_RESOURCE_PROTECTED.
 * **hardening:** a user caller may delete only a role at most its own rank (the level half of the
 * hierarchy rule for edits); otherwise deleting a role would strip it from users the caller may not act on.
 */
export async function deleteRole(ctx: AppContext, actor: Principal, id: string) {
  const tenantId = actor.tenantId
  return tdb(ctx, actor)
    .transaction()
    .execute(async (trx) => {
      const role = (await lockRole(trx, tenantId, id)) ?? fail('ROLE_NOT_FOUND')
      if (role.is_system) fail('SYSTEM_RESOURCE_PROTECTED', 'Built-in roles cannot be deleted')
      await assertMayGiveRole(trx, actor, { level: Number(role.level), permissions: [] })
      await deleteRoleRow(trx, tenantId, id)
      return { id, deleted: true as const }
    })
}

/**
 * POST /roles/:id/permissions: adds permissions; the caller must hold every permission the role has
 * afterwards. The built-in `admin` role already holds every permission of the tenant, so adding to it
 * changes nothing.
 */
export async function addRolePermissions(ctx: AppContext, actor: Principal, id: string, names: string[]) {
  const tenantId = actor.tenantId
  const wanted = [...new Set(names)]
  return tdb(ctx, actor)
    .transaction()
    .execute(async (trx) => {
      const role = (await lockRole(trx, tenantId, id)) ?? fail('ROLE_NOT_FOUND')
      await assertPermissionsExist(trx, tenantId, wanted)
      assertGivable(actor, wanted)
      const after = [...new Set([...(await permissionsOf(trx, actor, role)), ...wanted])]
      await assertMayGiveRole(trx, actor, { level: Number(role.level), permissions: after })
      if (isAdminRole(role)) return roleDto(trx, actor, role)
      const rows = await permissionRows(trx, tenantId, wanted, true)
      await addRolePermissionRows(
        trx,
        tenantId,
        role.id,
        [...rows.values()].map((r) => r.id),
      )
      return roleDto(trx, actor, await touchRole(trx, tenantId, role.id))
    })
}

/**
 * DELETE /roles/:id/permissions: removes permissions (ones the role lacks are ignored); the caller must
 * hold every permission the role keeps. The built-in `admin` role holds every permission of the tenant
 * by definition: removing from it is SYSTEM_RESOURCE_PROTECTED.
 */
export async function removeRolePermissions(ctx: AppContext, actor: Principal, id: string, names: string[]) {
  const tenantId = actor.tenantId
  const unwanted = new Set(names)
  return tdb(ctx, actor)
    .transaction()
    .execute(async (trx) => {
      const role = (await lockRole(trx, tenantId, id)) ?? fail('ROLE_NOT_FOUND')
      await assertPermissionsExist(trx, tenantId, [...unwanted])
      if (isAdminRole(role)) {
        fail('SYSTEM_RESOURCE_PROTECTED', 'The built-in admin role holds every permission of the tenant')
      }
      const after = (await permissionsOf(trx, actor, role)).filter((p) => !unwanted.has(p))
      await assertMayGiveRole(trx, actor, { level: Number(role.level), permissions: after })
      const rows = await permissionRows(trx, tenantId, [...unwanted], false)
      await removeRolePermissionRows(
        trx,
        tenantId,
        role.id,
        [...rows.values()].map((r) => r.id),
      )
      return roleDto(trx, actor, await touchRole(trx, tenantId, role.id))
    })
}
