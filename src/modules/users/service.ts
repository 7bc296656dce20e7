import { tdb, type AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import { assertNotOwnUser, type Principal } from '../../security/principal.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { retryOnContention } from '../../db/contention.js'
import type { PageParams } from '../../db/paginate.js'
import { normalizeEmail, normalizeUsername } from '../../lib/identifiers.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { removeOtp } from '../otp/queries.js'
import { endUserSessions } from '../sessions/queries.js'
import { audited } from '../audit/audited.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { findRoleByName, roleNamesOf } from '../roles/queries.js'
import {
  deleteUserRow,
  findUserById,
  listUsers as listUserRows,
  lockUser,
  toUserDto,
  updateUserRow,
  type UserChanges,
} from './queries.js'

export interface ListUsersQuery extends PageParams {
  status?: 'ACTIVE' | 'INACTIVE' | 'SUSPENDED'
  q?: string
  role?: string
  ids?: string
}

/** GET /users: one page of the caller's tenant's users; an unknown `role` name is ROLE_NOT_FOUND. */
export async function listUsers(ctx: AppContext, actor: Principal, query: ListUsersQuery) {
  const db = tdb(ctx, actor)
  let roleId: string | undefined
  if (query.role !== undefined) {
    roleId = ((await findRoleByName(db, actor.tenantId, query.role)) ?? fail('ROLE_NOT_FOUND')).id
  }
  const ids = query.ids ? [...new Set(query.ids.toLowerCase().split(','))] : undefined
  const filter = { status: query.status, q: query.q || undefined, roleId, ids }
  const page = await listUserRows(db, actor.tenantId, filter, query)
  const roles = await roleNamesOf(
    db,
    actor.tenantId,
    page.items.map((r) => r.id),
  )
  return { ...page, items: page.items.map((r) => toUserDto(r, actor.tenantCode, roles.get(r.id) ?? [])) }
}

/** GET /users/:userId: a user of the caller's tenant (another tenant's id is USER_NOT_FOUND). */
export async function getUser(ctx: AppContext, actor: Principal, userId: string) {
  const db = tdb(ctx, actor)
  const row = (await findUserById(db, actor.tenantId, userId)) ?? fail('USER_NOT_FOUND')
  const roles = await roleNamesOf(db, actor.tenantId, [row.id])
  return toUserDto(row, actor.tenantCode, roles.get(row.id) ?? [])
}

export interface UpdateUserInput {
  email?: string
  username?: string
  status?: 'ACTIVE' | 'INACTIVE' | 'SUSPENDED'
  emailVerified?: boolean
  otpEnabled?: boolean
}

function changesOf(input: UpdateUserInput): UserChanges {
  const issues: { path: string; message: string }[] = []
  const out: UserChanges = {}
  if (input.email !== undefined) {
    const email = normalizeEmail(input.email)
    if (email) out.email = email
    else issues.push({ path: 'body.email', message: 'is not a valid email' })
  }
  if (input.username !== undefined) {
    // Stored as given (trimmed), compared case-insensitively, as at register.
    if (normalizeUsername(input.username)) out.username = input.username.trim()
    else
      issues.push({
        path: 'body.username',
        message: 'is not a valid username (3-64 of [A-Za-z0-9._-], not all digits)',
      })
  }
  if (issues.length > 0) fail('VALIDATION_ERROR', 'Request validation failed', issues)
  if (input.status !== undefined) out.status = input.status
  if (input.emailVerified !== undefined) out.email_verified = input.emailVerified
  if (input.otpEnabled !== undefined) out.otp_enabled = input.otpEnabled
  return out
}

/**
 * True when the PATCH changes the stored email, username or status (a value sent as it is stored changes
 * nothing: the console sends the status on every save).
 */
function changesIdentifiers(
  current: { email: string | null; username: string | null; status: string },
  changes: UserChanges,
): boolean {
  return (
    (changes.email !== undefined && changes.email !== current.email) ||
    (changes.username !== undefined && changes.username !== current.username) ||
    (changes.status !== undefined && changes.status !== current.status)
  )
}

/**
 * PATCH /users/:userId: changes exactly email, username, status, emailVerified, otpEnabled (the schema
 * refuses anything else). Hierarchy rule applies. On a user behind the credential (its own, or one behind
 * a key: contract section 26) `otpEnabled: false` and a change of email, username or status are FORBIDDEN,
 * whatever the permissions. `otpEnabled: false` also removes the user's second factor (one OTP_DISABLED
 * row); `true` makes its next login need one (and enroll when it has none). Setting a status other than
 * ACTIVE also revokes every session of the user in the same transaction, so its refresh tokens stop
 * working at once (its access tokens stay valid until `exp`, like after logout); setting ACTIVE again
 * revives none of them.
 */
export async function updateUser(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  input: UpdateUserInput,
  meta: RequestMeta,
) {
  const changes = changesOf(input)
  const tenantId = actor.tenantId
  // Why every kind of credential: a stolen access token, or a key its holder made with it, must not remove
  // its own user's second factor; DELETE /me/otp asks for a code and a recent sign-in.
  if (changes.otp_enabled === false) {
    assertNotOwnUser(actor, userId, 'Remove your own second factor with DELETE /me/otp')
  }
  try {
    return await retryOnContention(() =>
      tdb(ctx, actor)
        .transaction()
        .execute(async (trx) => {
          // Why the user row first: logins lock it before sessions too (one lock order, no deadlock), and a
          // login waiting on it sees the new status and opens no session.
          const current = (await lockUser(trx, tenantId, userId)) ?? fail('USER_NOT_FOUND')
          // Why before the hierarchy rule: it lets a user act on itself; this rule holds for every credential.
          if (changesIdentifiers(current, changes)) {
            assertNotOwnUser(
              actor,
              userId,
              'Your own email changes with POST /me/email; your username and status, by another administrator',
            )
          }
          await assertMayActOnUser(trx, actor, { tenantId, userId, isPlatform: actor.isPlatform })
          const row = await updateUserRow(trx, tenantId, userId, clearVerifiedOnEmailChange(current, changes))
          // otpEnabled false is the lost-device reset: the secret and recovery codes go with the flag.
          if (changes.otp_enabled === false && (await removeOtp(trx, tenantId, userId))) {
            await writeAudit(trx, { tenantId, action: 'OTP_DISABLED', success: true, userId, actor, meta })
          }
          if (changes.status !== undefined && changes.status !== 'ACTIVE') {
            await endUserSessions(trx, tenantId, userId, 'user_status', new Date(ctx.clock.now()))
          }
          const roles = await roleNamesOf(trx, tenantId, [userId])
          return toUserDto(row, actor.tenantCode, roles.get(userId) ?? [])
        }),
    )
  } catch (err) {
    if (isUniqueViolation(err))
      fail('USER_ALREADY_EXISTS', 'The email or username is already taken in the tenant')
    throw err
  }
}

/**
 * DELETE /users/:userId: deletes the user with its sessions and refresh tokens (so nothing of it can
 * refresh again), roles and direct grants; hierarchy rule applies. One USER_DELETE row, failures included.
 */
export async function deleteUser(ctx: AppContext, actor: Principal, userId: string, meta: RequestMeta) {
  const tenantId = actor.tenantId
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'USER_DELETE', actor, meta, note: { userId: null, metadata: {} } },
    {
      act: async (trx, note) => {
        if (!(await lockUser(trx, tenantId, userId))) fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(trx, actor, { tenantId, userId, isPlatform: actor.isPlatform })
        // Why explicit, though the delete cascades to sessions: revocation must not hang on an ON DELETE rule.
        await endUserSessions(trx, tenantId, userId, 'user_deleted', new Date(ctx.clock.now()))
        await deleteUserRow(trx, tenantId, userId)
        return { id: userId, deleted: true as const }
      },
    },
  )
}

/**
 * A user PATCH's changes with `email_verified` cleared when `email` changes (unless the same PATCH sets
 * it): a new address is not proven, and its verification tokens are void anyway.
 */
export function clearVerifiedOnEmailChange<T extends { email?: string | null; email_verified?: boolean }>(
  current: { email: string | null },
  changes: T,
): T {
  const changed =
    changes.email !== undefined && (changes.email ?? '').toLowerCase() !== (current.email ?? '').toLowerCase()
  if (!changed || changes.email_verified !== undefined) return changes
  return { ...changes, email_verified: false }
}
