import type { Kysely } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import type { PageParams } from '../../db/paginate.js'
import { fail } from '../../errors.js'
import type { Principal } from '../../security/principal.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import {
  deleteCustomPermission,
  dropOrphanWildcard,
  findPermissionByName,
  insertCustomPermission,
  listPermissions as listPermissionRows,
  lockPermission,
  splitName,
  toPermissionDto,
  updateCustomPermission,
} from './queries.js'

async function page(ctx: AppContext, actor: Principal, query: PageParams, customOnly: boolean) {
  const rows = await listPermissionRows(tdb(ctx, actor), actor.tenantId, customOnly, query)
  return { ...rows, items: rows.items.map(toPermissionDto) }
}

/** GET /permissions: the built-in catalogue and the tenant's custom permissions, newest first. */
export function listPermissions(ctx: AppContext, actor: Principal, query: PageParams) {
  return page(ctx, actor, query, false)
}

/** GET /permissions/custom: only the tenant's custom permissions. */
export function listCustomPermissions(ctx: AppContext, actor: Principal, query: PageParams) {
  return page(ctx, actor, query, true)
}

/**
 * A custom permission name must be a concrete action of a resource other than `admin`: `r:*` exists by
 * itself while `r` has a permission, and a resource `admin` would give tenant admins `admin:*`.
 */
function assertCustomName(name: string): void {
  const { resource } = splitName(name)
  if (name.endsWith(':*')) {
    fail('VALIDATION_ERROR', 'Request validation failed', [
      {
        path: 'body.name',
        message: 'must name one action; `resource:*` exists while the resource has a permission',
      },
    ])
  }
  if (resource === 'admin') {
    fail('VALIDATION_ERROR', 'Request validation failed', [
      { path: 'body.name', message: 'the resource `admin` is reserved' },
    ])
  }
}

async function assertNameFree(db: Kysely<Database>, tenantId: string, name: string): Promise<void> {
  // Why a lookup besides the unique index: built-in names live under another index (tenant_id null).
  if (await findPermissionByName(db, tenantId, name)) fail('PERMISSION_ALREADY_EXISTS')
}

/** POST /permissions: a custom permission; resource and action come from the name. */
export async function createPermission(
  ctx: AppContext,
  actor: Principal,
  input: { name: string; description?: string | null },
) {
  assertCustomName(input.name)
  const tenantId = actor.tenantId
  try {
    return await tdb(ctx, actor)
      .transaction()
      .execute(async (trx) => {
        await assertNameFree(trx, tenantId, input.name)
        const row = await insertCustomPermission(trx, tenantId, {
          name: input.name,
          description: input.description ?? null,
        })
        return toPermissionDto(row)
      })
  } catch (err) {
    if (isUniqueViolation(err)) fail('PERMISSION_ALREADY_EXISTS')
    throw err
  }
}

/**
 * PATCH /permissions/:id: name or description of a custom permission (built-in: SYSTEM_RESOURCE_PROTECTED).
 * Renaming keeps its grants; a resource left without permissions loses its wildcard, with its grants.
 */
export async function updatePermission(
  ctx: AppContext,
  actor: Principal,
  id: string,
  input: { name?: string; description?: string | null },
) {
  if (input.name !== undefined) assertCustomName(input.name)
  const tenantId = actor.tenantId
  try {
    return await tdb(ctx, actor)
      .transaction()
      .execute(async (trx) => {
        const current = (await lockPermission(trx, tenantId, id)) ?? fail('PERMISSION_NOT_FOUND')
        if (current.tenant_id === null || current.is_system) {
          fail('SYSTEM_RESOURCE_PROTECTED', 'Built-in permissions cannot be changed')
        }
        if (input.name !== undefined && input.name !== current.name)
          await assertNameFree(trx, tenantId, input.name)
        const row = await updateCustomPermission(trx, tenantId, id, input)
        if (row.resource !== current.resource) await dropOrphanWildcard(trx, tenantId, current.resource)
        return toPermissionDto(row)
      })
  } catch (err) {
    if (isUniqueViolation(err)) fail('PERMISSION_ALREADY_EXISTS')
    throw err
  }
}

/**
 * DELETE /permissions/:id: a custom permission, removed from every role and direct grant (built-in:
 * SYSTEM_RESOURCE_PROTECTED). When it was its resource's last permission, the wildcard goes too.
 */
export async function deletePermission(ctx: AppContext, actor: Principal, id: string) {
  const tenantId = actor.tenantId
  return tdb(ctx, actor)
    .transaction()
    .execute(async (trx) => {
      const current = (await lockPermission(trx, tenantId, id)) ?? fail('PERMISSION_NOT_FOUND')
      if (current.tenant_id === null || current.is_system) {
        fail('SYSTEM_RESOURCE_PROTECTED', 'Built-in permissions cannot be deleted')
      }
      await deleteCustomPermission(trx, tenantId, id)
      await dropOrphanWildcard(trx, tenantId, current.resource)
      return { id, deleted: true as const }
    })
}
