import { tdb, type AppContext } from '../../context.js'
import { AppError, fail } from '../../errors.js'
import { holds, type Principal, type UserPrincipal } from '../../security/principal.js'
import { newUserIdentifiers } from '../users/new-identifiers.js'
import { checkPassword } from '../../lib/password-policy.js'
import { sha256Hex } from '../../lib/tokens.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { loadUserWithGrants } from '../permissions/grant-queries.js'
import { assertMayGiveRole } from '../permissions/hierarchy.js'
import { findRolesByName, insertUserRoles, permissionsOfRoles } from '../roles/queries.js'
import { insertUser, toUserDto } from '../users/queries.js'
import { countActive, findSessionOfToken, revokeSessions } from './session-queries.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { retryOnContention } from '../../db/contention.js'
import { afterRegister } from '../email/service.js'

/**
 * POST /logout: ends the session the refresh token belongs to, whatever the token's own state (rotated in
 * another tab, or by a refresh in flight), when it is the caller's session. `revoked` says whether that
 * session was active. The session row is locked before its tokens, as a refresh locks it, so a refresh
 * either committed its successor before (and the successor is revoked here) or finds the session revoked.
 */
export async function logout(ctx: AppContext, actor: UserPrincipal, token: string, meta: RequestMeta) {
  const db = tdb(ctx, actor)
  const now = new Date(ctx.clock.now())
  const revoked = await retryOnContention(() =>
    db.transaction().execute(async (trx) => {
      const row = await findSessionOfToken(trx, {
        tenantId: actor.tenantId,
        userId: actor.userId,
        tokenHash: sha256Hex(token),
      })
      const ended = row ? await revokeSessions(trx, actor.tenantId, [row.session_id], 'logout', now) : []
      // Why the expiry: an expired session was no longer active, though nobody had revoked it yet.
      const wasActive = countActive(ended, now) > 0
      await writeAudit(trx, {
        tenantId: actor.tenantId,
        action: 'LOGOUT',
        success: wasActive,
        userId: actor.userId,
        actor,
        errorMessage: wasActive ? null : 'no active session of this user for the refresh token',
        meta,
      })
      return wasActive
    }),
  )
  return { revoked }
}

export interface RegisterInput {
  email?: string
  username?: string
  cpf_cnpj?: string
  password: string
  roles?: string[]
  emailVerified?: boolean
  tenantCode?: string
}

/** POST /register: creates a user in the credential's tenant; one REGISTER row, failures included. */
export async function register(ctx: AppContext, actor: Principal, input: RegisterInput, meta: RequestMeta) {
  const db = tdb(ctx, actor)
  try {
    const user = await registerUnaudited(ctx, actor, input, meta)
    await afterRegister(ctx, actor, user, meta)
    return user
  } catch (err) {
    await writeAudit(db, {
      tenantId: actor.tenantId,
      action: 'REGISTER',
      success: false,
      actor,
      errorMessage: err instanceof AppError ? err.code : 'internal error',
      meta,
    }).catch(() => undefined)
    throw err
  }
}

async function registerUnaudited(ctx: AppContext, actor: Principal, input: RegisterInput, meta: RequestMeta) {
  if (!holds(actor.permissions, 'users:create')) fail('FORBIDDEN', 'Missing permission users:create')
  const tenant = (await ctx.tenants.byId(actor.tenantId)) ?? fail('TENANT_NOT_FOUND')
  if (input.tenantCode !== undefined && input.tenantCode.toLowerCase() !== tenant.code) {
    fail('FORBIDDEN', 'tenantCode does not match the credential’s tenant')
  }
  const {
    email,
    username,
    cpf_cnpj: cpf,
  } = newUserIdentifiers(input, tenant.authConfig.loginIdentifiers, 'body')
  const failedRules = checkPassword(input.password, tenant.authConfig.passwordPolicy)
  if (failedRules.length > 0) fail('PASSWORD_POLICY_VIOLATION', undefined, failedRules)

  const roleNames = [...new Set(input.roles ?? ['user'])]
  const roles = await findRolesByName(tdb(ctx, actor), tenant.id, roleNames)
  if (roles.length !== roleNames.length) fail('ROLE_NOT_FOUND')
  const perms = await permissionsOfRoles(tdb(ctx, actor), tenant.id, roles, tenant.isPlatform)
  for (const r of roles)
    await assertMayGiveRole(tdb(ctx, actor), actor, { level: r.level, permissions: perms.get(r.id) ?? [] })

  const passwordHash = await ctx.hasher.hash(input.password)
  try {
    return await tdb(ctx, actor)
      .transaction()
      .execute(async (trx) => {
        const user = await insertUser(trx, {
          tenant_id: tenant.id,
          email,
          username,
          cpf_cnpj: cpf,
          password_hash: passwordHash,
          email_verified: input.emailVerified ?? false,
        })
        await insertUserRoles(
          trx,
          tenant.id,
          user.id,
          roles.map((r) => r.id),
        )
        await writeAudit(trx, {
          tenantId: tenant.id,
          action: 'REGISTER',
          success: true,
          userId: user.id,
          actor,
          meta,
        })
        return toUserDto(user, tenant.code, roles.map((r) => r.name).sort())
      })
  } catch (err) {
    if (isUniqueViolation(err)) fail('USER_ALREADY_EXISTS')
    throw err
  }
}

/** GET /me: the user as stored now, with its effective permissions. A deleted user is USER_NOT_FOUND. */
export async function getMe(ctx: AppContext, actor: UserPrincipal) {
  const { user, grants } = await loadUserWithGrants(
    tdb(ctx, actor),
    actor.tenantId,
    actor.userId,
    actor.isPlatform,
  )
  if (!user) fail('USER_NOT_FOUND')
  return { ...toUserDto(user, actor.tenantCode, grants.roles), permissions: grants.permissions }
}

/** POST /validate: the verified claims and how long the token has left. */
export function validateToken(ctx: AppContext, actor: UserPrincipal) {
  const exp = Number(actor.claims.exp)
  return {
    valid: true as const,
    claims: actor.claims,
    expiresAt: new Date(exp * 1000).toISOString(),
    expiresIn: Math.max(0, exp - Math.floor(ctx.clock.now() / 1000)),
  }
}
