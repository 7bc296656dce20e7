import type { AppContext } from '../../context.js'
import { AppError, type ErrorCode } from '../../errors.js'
import { classifyIdentifier } from '../../lib/identifiers.js'
import { sha256Hex, uuidV7 } from '../../lib/tokens.js'
import { retryOnContention } from '../../db/contention.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { findUserForLogin } from '../users/queries.js'
import { countLoginFailure, lockedError, throttleKey } from '../account/lockout.js'
import { admitUser, completeLogin, loginFailure, tokensFor } from '../sessions/complete-login.js'
import { newSelectorToken, refreshTokenLookup } from '../sessions/refresh-token.js'
import { secondFactorAtLogin } from '../otp/login-step.js'
import { findRefreshToken, revokeSessions, rotateRefreshToken } from '../sessions/queries.js'

export interface LoginInput {
  tenantCode: string
  identifier: string
  password: string
  /** A second-factor code, for users whose logins need one. */
  otp?: string
}

/**
 * POST /login. Unknown identifier and wrong password cost one bcrypt compare each and give the same
 * response; every attempt on an existing tenant writes one LOGIN row.
 */
export async function login(ctx: AppContext, input: LoginInput, meta: RequestMeta) {
  const tenant = await ctx.tenants.byCode(input.tenantCode)
  if (!tenant) throw new AppError('TENANT_NOT_FOUND')
  const db = ctx.dbs.forTenant(tenant.id)
  const failed = (code: ErrorCode, userId: string | null, reason: string) =>
    loginFailure(db, tenant.id, meta, { code, userId, reason })
  if (tenant.status !== 'ACTIVE') throw await failed('TENANT_NOT_FOUND', null, 'tenant inactive')

  // Account throttling (auth_config.lockout): a locked identifier is refused before any lookup or hash,
  // known or not, so neither the answer nor its cost tells whether it exists. Off: no query at all.
  const lockout = tenant.authConfig.lockout
  const throttle = lockout.enabled ? throttleKey(input.identifier) : null
  let tracked = false
  if (throttle) {
    const state = await ctx.lockout.check(tenant.id, throttle, ctx.clock.now())
    if (state.lockedSeconds > 0) {
      await failed('INVALID_CREDENTIALS', null, 'identifier locked')
      throw lockedError(state.lockedSeconds)
    }
    tracked = state.tracked
  }
  const countFailure = (userId: string | null) =>
    throttle ? countLoginFailure(ctx, tenant, throttle, userId, meta) : Promise.resolve()

  const id = classifyIdentifier(input.identifier)
  const enabled = id !== null && tenant.authConfig.loginIdentifiers.includes(id.kind)
  const user = enabled ? await findUserForLogin(db, tenant.id, id.kind, id.value) : undefined
  if (!user) {
    // Why: same cost for unknown users, so timing reveals nothing about which identifiers exist.
    await ctx.hasher.dummyVerify(input.password)
    await countFailure(null)
    throw await failed('INVALID_CREDENTIALS', null, 'unknown identifier')
  }
  const check = await ctx.hasher.verify(input.password, user.password_hash)
  if (!check.ok) {
    await countFailure(user.id)
    throw await failed('INVALID_CREDENTIALS', user.id, 'wrong password')
  }
  await admitUser(ctx, tenant, user, failed)

  // The second factor, asked for only now that the password has passed; no query for users who need none.
  const factor =
    user.otp_enabled || tenant.authConfig.mfa.required
      ? await secondFactorAtLogin(ctx, {
          tenant,
          userId: user.id,
          otp: input.otp,
          throttleKey: throttle ?? throttleKey(input.identifier),
          failed: (code) => failed(code, user.id, code),
          countFailure: () => countFailure(user.id),
          meta,
        })
      : null
  if (throttle && tracked) await ctx.lockout.succeeded(tenant.id, throttle)
  const newHash = check.needsRehash ? await ctx.hasher.hash(input.password) : null
  const opened = await completeLogin(ctx, tenant, user, meta, {
    newHash,
    reason: factor === 'recovery' ? 'recovery_code' : undefined,
    secondFactor: factor !== null,
  })
  if (!opened) throw await failed('USER_INACTIVE', user.id, 'user no longer active')
  return opened
}

/**
 * POST /refresh. Rotation is one statement whose conditional UPDATE lets exactly one of concurrent
 * refreshes of a token win. A rotated token presented after the reuse grace revokes its whole session
 * (commit, then fail).
 */
export async function refresh(ctx: AppContext, token: string, meta: RequestMeta) {
  const lookup = refreshTokenLookup(token)
  const tenant = lookup ? await ctx.tenants.byId(lookup.tenantId) : null
  if (!tenant || !lookup) throw new AppError('INVALID_REFRESH_TOKEN')
  const db = ctx.dbs.forTenant(tenant.id)
  const nowMs = ctx.clock.now()
  const now = new Date(nowMs)
  const failed = async (userId: string | null, reason: string) => {
    await writeAudit(db, {
      tenantId: tenant.id,
      action: 'REFRESH_TOKEN',
      success: false,
      userId,
      errorMessage: reason,
      metadata: { reason },
      meta,
    })
    return new AppError('INVALID_REFRESH_TOKEN')
  }

  if (tenant.status === 'ACTIVE') {
    const nextId = uuidV7(now.getTime())
    const next = newSelectorToken(tenant.id, nextId)
    const expiresAt = new Date(nowMs + tenant.authConfig.refreshTokenExpiresIn * 1000)
    const rotated = await rotateRefreshToken(db, {
      tenantId: tenant.id,
      isPlatform: tenant.isPlatform,
      asyncCommit: ctx.dbs.onServer(tenant.id),
      lookup,
      nextId,
      nextHash: sha256Hex(next),
      now,
      expiresAt,
      sessionMaxLifetimeSeconds: tenant.authConfig.sessionMaxLifetimeSeconds,
      meta,
    })
    if (rotated) {
      const session = { id: rotated.user.session_id, authTime: rotated.user.auth_time }
      return tokensFor(ctx, tenant, rotated.user, rotated.grants, session, next)
    }
  }

  const seen = await findRefreshToken(db, tenant.id, lookup)
  if (!seen) throw await failed(null, 'unknown token')
  if (tenant.status !== 'ACTIVE') throw await failed(seen.user_id, 'tenant inactive')
  if (seen.revoked_at === null && new Date(seen.expires_at).getTime() > nowMs) {
    throw await failed(seen.user_id, 'session or user not active')
  }
  if (seen.rotated_at !== null) {
    const graceMs = tenant.authConfig.refreshReuseGraceSeconds * 1000
    if (nowMs - new Date(seen.rotated_at).getTime() > graceMs && seen.session_revoked_at === null) {
      await retryOnContention(() =>
        db
          .transaction()
          .execute((trx) => revokeSessions(trx, tenant.id, [seen.session_id], 'refresh_token_reuse', now)),
      )
      throw await failed(seen.user_id, 'refresh token reuse: session revoked')
    }
    throw await failed(seen.user_id, 'refresh token already rotated')
  }
  throw await failed(seen.user_id, seen.revoked_at !== null ? 'token revoked' : 'token expired')
}
