import type { Kysely, Transaction } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import type { Principal } from '../../security/principal.js'
import { assertGivable, assertMayActOnUser, assertMayGiveRole } from '../permissions/hierarchy.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { lockUser } from '../users/queries.js'
import {
  deleteUserRole,
  findRoleById,
  findRoleByName,
  insertUserRole,
  roleNamesOf,
  type RoleRow,
} from './queries.js'
import { permissionsOf } from './service.js'

export interface RoleAssignmentInput {
  userId: string
  roleId?: string
  roleName?: string
}

function findAssignedRole(db: Kysely<Database>, tenantId: string, input: RoleAssignmentInput) {
  return input.roleId !== undefined
    ? findRoleById(db, tenantId, input.roleId)
    : findRoleByName(db, tenantId, input.roleName ?? '')
}

/**
 * The shared steps of assign and remove, as one audited act: locks the target user (USER_NOT_FOUND) and
 * finds the role by id or name (ROLE_NOT_FOUND), naming both in the audit note as soon as they are known;
 * `change` makes the act's own checks and change; the answer is the user's roles afterwards.
 */
function changeAssignment(
  ctx: AppContext,
  actor: Principal,
  action: 'ROLE_ASSIGN' | 'ROLE_REMOVE',
  input: RoleAssignmentInput,
  meta: RequestMeta,
  change: (trx: Transaction<Database>, role: RoleRow) => Promise<void>,
) {
  const tenantId = actor.tenantId
  const note = { userId: null, metadata: { role: input.roleName ?? input.roleId } }
  return audited(
    tdb(ctx, actor),
    { tenantId, action, actor, meta, note },
    {
      act: async (trx, n) => {
        if (!(await lockUser(trx, tenantId, input.userId))) fail('USER_NOT_FOUND')
        n.userId = input.userId
        const role = (await findAssignedRole(trx, tenantId, input)) ?? fail('ROLE_NOT_FOUND')
        n.metadata.role = role.name
        await change(trx, role)
        return {
          userId: input.userId,
          roles: (await roleNamesOf(trx, tenantId, [input.userId])).get(input.userId) ?? [],
        }
      },
    },
  )
}

/**
 * POST /roles/assign: gives a user a role (by id or name). Assigning a held role is a no-op 200.
 * Hierarchy: the role's level at most the caller's rank and its permissions within the caller's set; a
 * Client Key may also act only on a user whose permissions lie within its scopes. One ROLE_ASSIGN row.
 */
export function assignRole(ctx: AppContext, actor: Principal, input: RoleAssignmentInput, meta: RequestMeta) {
  const target = { tenantId: actor.tenantId, userId: input.userId, isPlatform: actor.isPlatform }
  return changeAssignment(ctx, actor, 'ROLE_ASSIGN', input, meta, async (trx, role) => {
    const permissions = await permissionsOf(trx, actor, role)
    assertGivable(actor, permissions)
    await assertMayGiveRole(trx, actor, { level: Number(role.level), permissions })
    if (actor.kind === 'client_key') await assertMayActOnUser(trx, actor, target)
    await insertUserRole(trx, actor.tenantId, input.userId, role.id)
  })
}

/**
 * POST /roles/remove: takes a role from a user (removing one it does not hold is a no-op 200).
 * Hierarchy: a user caller only from a user ranked strictly below it, or from itself; a Client Key only
 * from a user whose permissions lie within its scopes. One ROLE_REMOVE row.
 */
export function removeRole(ctx: AppContext, actor: Principal, input: RoleAssignmentInput, meta: RequestMeta) {
  const target = { tenantId: actor.tenantId, userId: input.userId, isPlatform: actor.isPlatform }
  return changeAssignment(ctx, actor, 'ROLE_REMOVE', input, meta, async (trx, role) => {
    await assertMayActOnUser(trx, actor, target)
    await deleteUserRole(trx, actor.tenantId, input.userId, role.id)
  })
}
