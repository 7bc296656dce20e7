import type { Kysely } from 'kysely'
import { tdb, type AppContext, type TenantInfo } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import { holds, type Principal, type UserPrincipal } from '../../security/principal.js'
import { newUserIdentifiers } from '../users/new-identifiers.js'
import { checkPassword } from '../../lib/password-policy.js'
import { writeAudit, type AuditEntry, type RequestMeta } from '../audit/write.js'
import { loadUserWithGrants } from '../permissions/grant-queries.js'
import { assertMayGiveRole } from '../permissions/hierarchy.js'
import { findRolesByName, insertUserRoles, permissionsOfRoles, type RoleRow } from '../roles/queries.js'
import { insertUser, toUserDto } from '../users/queries.js'
import { countActive, findSessionOfToken, revokeSessions } from '../sessions/queries.js'
import { refreshTokenLookup } from '../sessions/refresh-token.js'
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
      const lookup = refreshTokenLookup(token)
      const row = lookup
        ? await findSessionOfToken(trx, { tenantId: actor.tenantId, userId: actor.userId, lookup })
        : undefined
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
export function register(ctx: AppContext, actor: Principal, input: RegisterInput, meta: RequestMeta) {
  return createAccount(ctx, {
    tenantId: actor.tenantId,
    actor,
    input: { ...input, emailVerified: input.emailVerified ?? false },
    meta,
    admit: (tenant) => {
      if (!holds(actor.permissions, 'users:create')) fail('FORBIDDEN', 'Missing permission users:create')
      if (input.tenantCode !== undefined && input.tenantCode.toLowerCase() !== tenant.code) {
        fail('FORBIDDEN', 'tenantCode does not match the credential’s tenant')
      }
    },
    roles: async (db, tenant) => {
      const roleNames = [...new Set(input.roles ?? ['user'])]
      const roles = await findRolesByName(db, tenant.id, roleNames)
      if (roles.length !== roleNames.length) fail('ROLE_NOT_FOUND')
      const perms = await permissionsOfRoles(db, tenant.id, roles, tenant.isPlatform)
      for (const r of roles)
        await assertMayGiveRole(db, actor, { level: r.level, permissions: perms.get(r.id) ?? [] })
      return roles
    },
  })
}

/** What a new account is made of: its identifiers, its password, and whether its email counts as verified. */
export interface NewAccount {
  email?: string
  username?: string
  cpf_cnpj?: string
  password: string
  emailVerified: boolean
}

/** How one caller creates an account: the rules of its own (who may, which roles), around the shared steps. */
export interface AccountRequest {
  readonly tenantId: string
  /** Who acts (the audit row's actor); null for a sign-up, which has no principal. */
  readonly actor: Principal | null
  readonly input: NewAccount
  readonly meta: RequestMeta
  /** Extra audit metadata of every row this creation writes (a sign-up's `via` and `keyId`). */
  readonly metadata?: AuditEntry['metadata']
  /** The caller's own admission rule, run first with the tenant; throws to refuse. */
  readonly admit?: (tenant: TenantInfo) => void
  /** Resolves and checks the roles to give, on the tenant's handle; throws to refuse. */
  readonly roles: (db: Kysely<Database>, tenant: TenantInfo) => Promise<RoleRow[]>
}

/**
 * The one way an account is made, for POST /register and POST /signup alike: the tenant's identifier
 * kinds and password policy, the caller's role rule, a bcrypt hash, the user and its roles with a
 * REGISTER row in one transaction (a failure row after a refusal), then the verification mail when the
 * tenant's verification is on.
 */
export async function createAccount(ctx: AppContext, req: AccountRequest) {
  const db = ctx.dbs.forTenant(req.tenantId)
  try {
    const user = await createAccountUnaudited(ctx, db, req)
    await afterRegister(ctx, req.tenantId, req.actor, user, req.meta)
    return user
  } catch (err) {
    await writeAudit(db, {
      tenantId: req.tenantId,
      action: 'REGISTER',
      success: false,
      actor: req.actor,
      errorMessage: err instanceof AppError ? err.code : 'internal error',
      metadata: req.metadata,
      meta: req.meta,
    }).catch(() => undefined)
    throw err
  }
}

async function createAccountUnaudited(ctx: AppContext, db: Kysely<Database>, req: AccountRequest) {
  const { input } = req
  const tenant = (await ctx.tenants.byId(req.tenantId)) ?? fail('TENANT_NOT_FOUND')
  req.admit?.(tenant)
  const {
    email,
    username,
    cpf_cnpj: cpf,
  } = newUserIdentifiers(input, tenant.authConfig.loginIdentifiers, 'body')
  const failedRules = checkPassword(input.password, tenant.authConfig.passwordPolicy)
  if (failedRules.length > 0) fail('PASSWORD_POLICY_VIOLATION', undefined, failedRules)
  const roles = await req.roles(db, tenant)

  const passwordHash = await ctx.hasher.hash(input.password)
  try {
    return await db.transaction().execute(async (trx) => {
      const user = await insertUser(trx, {
        tenant_id: tenant.id,
        email,
        username,
        cpf_cnpj: cpf,
        password_hash: passwordHash,
        email_verified: input.emailVerified,
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
        actor: req.actor,
        metadata: req.metadata,
        meta: req.meta,
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
