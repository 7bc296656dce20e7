import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import { holds, type Principal } from '../../auth/principal.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import type { RequestMeta } from '../audit/write.js'
import { audited } from '../roles/audited.js'
import { assertContains, assertGivable, assertMayActOnUser } from '../roles/hierarchy.js'
import { findUserById, lockUser } from '../users/queries.js'
import { loadGrants } from './effective.js'
import {
  deleteCustomPermission,
  deleteDirectGrant,
  dropOrphanWildcard,
  findPermissionById,
  findPermissionByName,
  insertCustomPermission,
  insertDirectGrant,
  listPermissions as listPermissionRows,
  missingPermissions,
  permissionRows,
  splitName,
  toPermissionDto,
  updateCustomPermission,
} from './queries.js'

const tdb = (ctx: AppContext, actor: Principal) => ctx.dbs.forTenant(actor.tenantId)

type Page = { limit?: number; offset?: number }

async function page(ctx: AppContext, actor: Principal, query: Page, customOnly: boolean) {
  const limit = query.limit ?? 20
  const offset = query.offset ?? 0
  const { rows, total } = await listPermissionRows(tdb(ctx, actor), actor.tenantId, customOnly, limit, offset)
  return { items: rows.map(toPermissionDto), total, limit, offset }
}

/** GET /permissions: the built-in catalogue and the tenant's custom permissions, newest first. */
export function listPermissions(ctx: AppContext, actor: Principal, query: Page) {
  return page(ctx, actor, query, false)
}

/** GET /permissions/custom: only the tenant's custom permissions. */
export function listCustomPermissions(ctx: AppContext, actor: Principal, query: Page) {
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
        const current = (await findPermissionById(trx, tenantId, id, true)) ?? fail('PERMISSION_NOT_FOUND')
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
      const current = (await findPermissionById(trx, tenantId, id, true)) ?? fail('PERMISSION_NOT_FOUND')
      if (current.tenant_id === null || current.is_system) {
        fail('SYSTEM_RESOURCE_PROTECTED', 'Built-in permissions cannot be deleted')
      }
      await deleteCustomPermission(trx, tenantId, id)
      await dropOrphanWildcard(trx, tenantId, current.resource)
      return { id, deleted: true as const }
    })
}

/** A user's permissions as stored now: direct grants, per role, and the effective union. */
async function userPermissions(db: Kysely<Database>, actor: Principal, userId: string) {
  const g = await loadGrants(db, actor.tenantId, userId, actor.isPlatform)
  return { userId, direct: g.direct, fromRoles: g.fromRoles, effective: g.permissions }
}

/** GET /permissions/user/:userId. Another tenant's user is USER_NOT_FOUND. */
export async function getUserPermissions(ctx: AppContext, actor: Principal, userId: string) {
  const db = tdb(ctx, actor)
  if (!(await findUserById(db, actor.tenantId, userId))) fail('USER_NOT_FOUND')
  return userPermissions(db, actor, userId)
}

async function assertExists(db: Kysely<Database>, tenantId: string, names: readonly string[]) {
  const missing = await missingPermissions(db, tenantId, names)
  if (missing.length > 0) fail('PERMISSION_NOT_FOUND', `Permission not found: ${missing.join(', ')}`)
}

export interface GrantInput {
  userId: string
  permission: string
}

/**
 * The common start of grant and revoke: locks the target user (USER_NOT_FOUND, named in the audit note
 * once known) and checks the permission exists in the tenant (PERMISSION_NOT_FOUND).
 */
async function lockTargetAndPermission(
  trx: Transaction<Database>,
  tenantId: string,
  input: GrantInput,
  n: { userId: string | null },
): Promise<void> {
  if (!(await lockUser(trx, tenantId, input.userId))) fail('USER_NOT_FOUND')
  n.userId = input.userId
  await assertExists(trx, tenantId, [input.permission])
}

/**
 * POST /permissions/grant: a direct grant. `admin:*` outside the platform tenant is FORBIDDEN; the
 * hierarchy rule applies (containment, then the target). One PERMISSION_GRANT row, failures included.
 */
export async function grantPermission(
  ctx: AppContext,
  actor: Principal,
  input: GrantInput,
  meta: RequestMeta,
) {
  const tenantId = actor.tenantId
  const note = { userId: null, metadata: { permission: input.permission } }
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'PERMISSION_GRANT', actor, meta, note },
    async (trx, n) => {
      await lockTargetAndPermission(trx, tenantId, input, n)
      assertGivable(actor, [input.permission])
      assertContains(actor, [input.permission])
      await assertMayActOnUser(trx, actor, { tenantId, userId: input.userId, isPlatform: actor.isPlatform })
      const row = (await permissionRows(trx, tenantId, [input.permission], true)).get(input.permission)
      if (!row) fail('PERMISSION_NOT_FOUND')
      await insertDirectGrant(trx, tenantId, input.userId, row.id)
      return userPermissions(trx, actor, input.userId)
    },
  )
}

/**
 * POST /permissions/revoke: removes a direct grant (one the user does not hold directly: no-op 200;
 * permissions from roles are untouched). Hierarchy rule on the target. One PERMISSION_REVOKE row.
 */
export async function revokePermission(
  ctx: AppContext,
  actor: Principal,
  input: GrantInput,
  meta: RequestMeta,
) {
  const tenantId = actor.tenantId
  const note = { userId: null, metadata: { permission: input.permission } }
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'PERMISSION_REVOKE', actor, meta, note },
    async (trx, n) => {
      await lockTargetAndPermission(trx, tenantId, input, n)
      await assertMayActOnUser(trx, actor, { tenantId, userId: input.userId, isPlatform: actor.isPlatform })
      const row = (await permissionRows(trx, tenantId, [input.permission], false)).get(input.permission)
      if (row) await deleteDirectGrant(trx, tenantId, input.userId, row.id)
      return userPermissions(trx, actor, input.userId)
    },
  )
}

export interface CheckInput {
  permission?: string
  permissions?: string[]
  mode?: 'all' | 'any'
  userId?: string
}

/**
 * POST /permissions/check, against the database (not the token): the caller itself by default (a Client
 * Key: its own scopes, userId null); another user needs `permissions:read`. Every name must exist.
 */
export async function checkPermission(ctx: AppContext, actor: Principal, input: CheckInput) {
  const db = tdb(ctx, actor)
  const userId = input.userId ?? (actor.kind === 'user' ? actor.userId : null)
  const self = actor.kind === 'user' && userId === actor.userId
  if (userId !== null && !self && !holds(actor.permissions, 'permissions:read')) {
    fail('FORBIDDEN', 'Checking another user needs permissions:read')
  }
  const names = input.permissions ?? (input.permission !== undefined ? [input.permission] : [])
  await assertExists(db, actor.tenantId, names)
  let held: ReadonlySet<string>
  if (userId === null) held = actor.permissions
  else {
    if (!(await findUserById(db, actor.tenantId, userId))) fail('USER_NOT_FOUND')
    held = new Set((await loadGrants(db, actor.tenantId, userId, actor.isPlatform)).permissions)
  }
  if (input.permissions === undefined) {
    const permission = input.permission as string
    return { allowed: holds(held, permission), userId, permission }
  }
  const mode = input.mode ?? 'all'
  const results: Record<string, boolean> = {}
  for (const p of input.permissions) results[p] = holds(held, p)
  const values = Object.values(results)
  const allowed = mode === 'all' ? values.every(Boolean) : values.some(Boolean)
  return { allowed, userId, permissions: input.permissions, mode, results }
}
