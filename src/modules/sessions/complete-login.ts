import type { Kysely } from 'kysely'
import type { AppContext, TenantInfo } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, type ErrorCode } from '../../errors.js'
import { issueAccessToken } from '../../security/access-token.js'
import type { Grants } from '../../security/grants.js'
import { loadGrants } from '../permissions/grant-queries.js'
import { retryOnContention } from '../../db/contention.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { recordLogin } from '../users/queries.js'
import { loginNeedsVerifiedEmail } from '../email/service.js'
import { openSession } from './open.js'

/**
 * Writes one failed LOGIN row through `db` (outside any rolled-back transaction: commit, then fail) and
 * returns the error to throw. `errorMessage` defaults to the reason.
 */
export async function loginFailure(
  db: Kysely<Database>,
  tenantId: string,
  meta: RequestMeta,
  f: {
    code: ErrorCode
    userId: string | null
    reason: string
    errorMessage?: string
    method?: 'passkey' | 'federated'
    providerId?: string
  },
): Promise<AppError> {
  await writeAudit(db, {
    tenantId,
    action: 'LOGIN',
    success: false,
    userId: f.userId,
    errorMessage: f.errorMessage ?? f.reason,
    metadata: f.method
      ? { reason: f.reason, method: f.method, ...(f.providerId ? { providerId: f.providerId } : {}) }
      : { reason: f.reason },
    meta,
  })
  return new AppError(f.code)
}

/** Writes a LOGIN failure row for a login's user and returns the error to throw (see loginFailure). */
export type LoginFailed = (code: ErrorCode, userId: string | null, reason: string) => Promise<AppError>

/**
 * The checks every first factor makes of its user once the factor has passed (a password, a passkey):
 * ACTIVE, else USER_INACTIVE; a verified email where the tenant requires one, else EMAIL_NOT_VERIFIED.
 * Each refusal writes its LOGIN failure row through `failed`. Checked after the factor, so a caller who
 * cannot pass it learns nothing of the user's state.
 */
export async function admitUser(
  ctx: AppContext,
  tenant: TenantInfo,
  user: { id: string; status: string; email: string | null; email_verified: boolean },
  failed: LoginFailed,
): Promise<void> {
  if (user.status !== 'ACTIVE')
    throw await failed('USER_INACTIVE', user.id, `user ${user.status.toLowerCase()}`)
  if (loginNeedsVerifiedEmail(ctx, tenant, user))
    throw await failed('EMAIL_NOT_VERIFIED', user.id, 'email not verified')
}

/** The session's `login_method` (the ID token's `amr` of section 23) by how the sign-in was made. */
const LOGIN_METHODS = { passkey: 'passkey', federated: 'fed', otp: 'otp', pwd: 'pwd' } as const

type LoginUser = { id: string; email: string | null; username: string | null }

/**
 * The login response: a new access token carrying `grants` and `authTime` (the session's login, in
 * seconds since the epoch), beside the given refresh token.
 */
export async function tokensFor(
  ctx: AppContext,
  tenant: TenantInfo,
  user: LoginUser,
  grants: Grants,
  session: { id: string; authTime: number },
  refreshToken: string,
) {
  const { accessToken, expiresIn } = await issueAccessToken(
    ctx.keystore,
    {
      userId: user.id,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      email: user.email,
      username: user.username,
      roles: grants.roles,
      permissions: grants.permissions,
      sessionId: session.id,
      authTime: session.authTime,
    },
    tenant.authConfig.accessTokenExpiresIn,
    ctx.clock.now(),
  )
  return {
    accessToken,
    refreshToken,
    expiresIn,
    user: {
      id: user.id,
      email: user.email,
      username: user.username,
      tenantId: tenant.id,
      tenantCode: tenant.code,
    },
  }
}

/**
 * The end of every login whose factors all passed (POST /login, POST /login/otp, POST /login/passkey): opens the session
 * (within the tenant's session limit), records the login (and a rehashed password), writes the LOGIN
 * success row, and issues the tokens. Null when the user stopped being ACTIVE meanwhile: nothing written.
 */
export async function completeLogin(
  ctx: AppContext,
  tenant: TenantInfo,
  user: LoginUser,
  meta: RequestMeta,
  opts: {
    newHash?: string | null
    reason?: string
    method?: 'passkey' | 'federated'
    /** The identity provider of a federated sign-in (contract section 24), for its LOGIN row. */
    providerId?: string
    secondFactor?: boolean
  } = {},
) {
  const db = ctx.dbs.forTenant(tenant.id)
  const nowMs = ctx.clock.now()
  const now = new Date(nowMs)
  // The session ends at the earlier of its token's lifetime and the session's maximum lifetime.
  const { refreshTokenExpiresIn, sessionMaxLifetimeSeconds } = tenant.authConfig
  const expiresAt = new Date(nowMs + Math.min(refreshTokenExpiresIn, sessionMaxLifetimeSeconds) * 1000)
  const opened = await retryOnContention(() =>
    db.transaction().execute(async (trx) => {
      const session = await openSession(trx, {
        tenantId: tenant.id,
        userId: user.id,
        max: tenant.authConfig.maxConcurrentSessions,
        now,
        expiresAt,
        ip: meta.ip,
        userAgent: meta.userAgent,
        loginMethod: LOGIN_METHODS[opts.method ?? (opts.secondFactor ? 'otp' : 'pwd')],
      })
      if (!session) return null
      await recordLogin(trx, tenant.id, user.id, now, opts.newHash)
      await writeAudit(trx, {
        tenantId: tenant.id,
        action: 'LOGIN',
        success: true,
        userId: user.id,
        metadata:
          opts.reason || opts.method
            ? { reason: opts.reason, method: opts.method, providerId: opts.providerId }
            : undefined,
        meta,
      })
      return session
    }),
  )
  // Why: deactivated (or deleted) while its password was being checked; its sessions were just revoked.
  if (!opened) return null
  const grants = await loadGrants(db, tenant.id, user.id, tenant.isPlatform)
  // Why the same instant as the session row's `created_at`: a refresh reads `auth_time` back from it.
  const session = { id: opened.sessionId, authTime: Math.floor(nowMs / 1000) }
  return tokensFor(ctx, tenant, user, grants, session, opened.refreshToken)
}
