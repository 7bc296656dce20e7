import type { Kysely, Transaction } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import { loadGrants } from './grant-queries.js'
import { assertContains, assertGivable, assertMayActOnUser } from './hierarchy.js'
import { holds, type Principal } from '../../security/principal.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { findUserById, lockUser } from '../users/queries.js'
import { assertPermissionsExist, deleteDirectGrant, insertDirectGrant, permissionRows } from './queries.js'

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

export interface GrantInput {
  userId: string
  permission: string
}

/**
 * The shared steps of grant and revoke, as one audited act: locks the target user (USER_NOT_FOUND, named
 * in the audit note once known) and checks the permission exists in the tenant (PERMISSION_NOT_FOUND);
 * `change` makes the act's own checks and change; the answer is the user's permissions afterwards.
 */
function changeGrant(
  ctx: AppContext,
  actor: Principal,
  action: 'PERMISSION_GRANT' | 'PERMISSION_REVOKE',
  input: GrantInput,
  meta: RequestMeta,
  change: (trx: Transaction<Database>) => Promise<void>,
) {
  const tenantId = actor.tenantId
  const note = { userId: null, metadata: { permission: input.permission } }
  return audited(
    tdb(ctx, actor),
    { tenantId, action, actor, meta, note },
    {
      act: async (trx, n) => {
        if (!(await lockUser(trx, tenantId, input.userId))) fail('USER_NOT_FOUND')
        n.userId = input.userId
        await assertPermissionsExist(trx, tenantId, [input.permission])
        await change(trx)
        return userPermissions(trx, actor, input.userId)
      },
    },
  )
}

/**
 * POST /permissions/grant: a direct grant. `admin:*` outside the platform tenant is FORBIDDEN; the
 * hierarchy rule applies (containment, then the target). One PERMISSION_GRANT row, failures included.
 */
export function grantPermission(ctx: AppContext, actor: Principal, input: GrantInput, meta: RequestMeta) {
  const tenantId = actor.tenantId
  return changeGrant(ctx, actor, 'PERMISSION_GRANT', input, meta, async (trx) => {
    assertGivable(actor, [input.permission])
    assertContains(actor, [input.permission])
    await assertMayActOnUser(trx, actor, { tenantId, userId: input.userId, isPlatform: actor.isPlatform })
    const row = (await permissionRows(trx, tenantId, [input.permission], true)).get(input.permission)
    if (!row) fail('PERMISSION_NOT_FOUND')
    await insertDirectGrant(trx, tenantId, input.userId, row.id)
  })
}

/**
 * POST /permissions/revoke: removes a direct grant (one the user does not hold directly: no-op 200;
 * permissions from roles are untouched). Hierarchy rule on the target. One PERMISSION_REVOKE row.
 */
export function revokePermission(ctx: AppContext, actor: Principal, input: GrantInput, meta: RequestMeta) {
  const tenantId = actor.tenantId
  return changeGrant(ctx, actor, 'PERMISSION_REVOKE', input, meta, async (trx) => {
    await assertMayActOnUser(trx, actor, { tenantId, userId: input.userId, isPlatform: actor.isPlatform })
    const row = (await permissionRows(trx, tenantId, [input.permission], false)).get(input.permission)
    if (row) await deleteDirectGrant(trx, tenantId, input.userId, row.id)
  })
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
  await assertPermissionsExist(db, actor.tenantId, names)
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
