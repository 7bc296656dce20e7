import type { Transaction } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import { assertNotOwnUser, type Principal, type UserPrincipal } from '../../security/principal.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { checkPassword, type PasswordRule } from '../../lib/password-policy.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { countActive, endUserSessions } from '../sessions/queries.js'
import { findUserPassword, lockUserPassword, setPasswordHash } from '../users/queries.js'
import { SecretCheck } from './secret-check.js'

/** The tenant's policy failures of a new password, `sameAsCurrent` last; throws when there is any. */
function assertPolicy(rules: PasswordRule[]): void {
  if (rules.length > 0) fail('PASSWORD_POLICY_VIOLATION', undefined, rules)
}

/**
 * Stores `hash` in place of `expectedHash` and revokes the user's sessions (all but `keep`, or none), in
 * one transaction. A hash changed by someone else since it was read fails: the password that was checked
 * is no longer the current one.
 */
async function replacePassword(
  ctx: AppContext,
  trx: Transaction<Database>,
  p: { tenantId: string; userId: string; expectedHash: string; hash: string; revoke: boolean; keep?: string },
): Promise<number> {
  const row = (await lockUserPassword(trx, p.tenantId, p.userId)) ?? fail('USER_NOT_FOUND')
  if (row.password_hash !== p.expectedHash) fail('INVALID_CREDENTIALS', 'The password was changed meanwhile')
  await setPasswordHash(trx, p.tenantId, p.userId, p.hash)
  if (!p.revoke) return 0
  const now = new Date(ctx.clock.now())
  return countActive(await endUserSessions(trx, p.tenantId, p.userId, 'password_changed', now, p.keep), now)
}

export interface ChangeMyPasswordInput {
  currentPassword: string
  newPassword: string
}

/**
 * POST /me/password: checks the current password (bcrypt off the event loop, before any transaction),
 * applies the tenant policy plus `sameAsCurrent`, then writes the new hash and revokes every other
 * session of the user in one transaction; the calling session stays. One PASSWORD_CHANGED row.
 */
export async function changeMyPassword(
  ctx: AppContext,
  actor: UserPrincipal,
  input: ChangeMyPasswordInput,
  meta: RequestMeta,
) {
  const { tenantId, userId } = actor
  const db = tdb(ctx, actor)
  // A wrong currentPassword is a failure of the user's secret budget (contract section 22).
  const check = new SecretCheck(ctx, tenantId, userId, meta)
  return audited(
    db,
    { tenantId, action: 'PASSWORD_CHANGED', actor, meta, note: { userId: null, metadata: {} } },
    {
      before: async (note) => {
        const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
        const user = (await findUserPassword(db, tenantId, userId)) ?? fail('USER_NOT_FOUND')
        note.userId = userId
        if (user.status !== 'ACTIVE') fail('USER_INACTIVE')
        const rules = checkPassword(input.newPassword, tenant.authConfig.passwordPolicy)
        if (input.newPassword === input.currentPassword) rules.push('sameAsCurrent')
        assertPolicy(rules)
        await check.take()
        const verified = await ctx.hasher.verify(input.currentPassword, user.password_hash)
        if (!verified.ok) fail('INVALID_CREDENTIALS')
        return { expectedHash: user.password_hash, hash: await ctx.hasher.hash(input.newPassword) }
      },
      act: async (trx, note, { expectedHash, hash }) => {
        const sessionsRevoked = await replacePassword(ctx, trx, {
          tenantId,
          userId,
          expectedHash,
          hash,
          revoke: true,
          keep: actor.sessionId,
        })
        note.metadata.sessionsRevoked = sessionsRevoked
        return { changed: true as const, sessionsRevoked }
      },
    },
  ).then(check.passed, check.failedWith('INVALID_CREDENTIALS'))
}

export interface ResetUserPasswordInput {
  password: string
  revokeSessions?: boolean
}

/**
 * PUT /users/:userId/password: an administrator sets a user's password. Never the user the credential
 * stands for (its own, or a key's creator): FORBIDDEN. Hierarchy rule first (so the policy's answer tells
 * nothing to a caller who may not act on the user), then the tenant policy (never compared with the
 * current password: no oracle), then the new hash and (unless `revokeSessions` is false) the revocation of every
 * session of the user in one transaction. One PASSWORD_RESET row.
 */
export async function resetUserPassword(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  input: ResetUserPasswordInput,
  meta: RequestMeta,
) {
  const { tenantId } = actor
  const db = tdb(ctx, actor)
  const target = { tenantId, userId, isPlatform: actor.isPlatform }
  return audited(
    db,
    { tenantId, action: 'PASSWORD_RESET', actor, meta, note: { userId: null, metadata: {} } },
    {
      before: async (note) => {
        // Why every kind of credential: a stolen access token, or a key its holder made with it, must not be
        // enough to set its user's password for good; POST /me/password asks for the current one.
        assertNotOwnUser(actor, userId, 'Change your own password with POST /me/password')
        const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
        const user = (await findUserPassword(db, tenantId, userId)) ?? fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(db, actor, target)
        // Why no `sameAsCurrent` here: comparing with the stored hash would tell the caller whether a guess
        // is the user's password (contract section 22); an administrator may set the current one again.
        assertPolicy(checkPassword(input.password, tenant.authConfig.passwordPolicy))
        return { expectedHash: user.password_hash, hash: await ctx.hasher.hash(input.password) }
      },
      act: async (trx, note, { expectedHash, hash }) => {
        // Why again: a rank may have changed while the hash was computed; this one commits with the change.
        await assertMayActOnUser(trx, actor, target)
        const sessionsRevoked = await replacePassword(ctx, trx, {
          tenantId,
          userId,
          expectedHash,
          hash,
          revoke: input.revokeSessions ?? true,
        })
        note.metadata.sessionsRevoked = sessionsRevoked
        return { changed: true as const, sessionsRevoked }
      },
    },
  )
}
