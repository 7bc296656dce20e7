import type { AppContext, TenantInfo } from '../../context.js'
import { AppError, type ErrorCode } from '../../errors.js'
import { sha256Hex } from '../../lib/tokens.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { countLoginFailure, lockedError } from '../account/lockout.js'
import { SecretCheck } from '../account/secret-check.js'
import { findUserById } from '../users/queries.js'
import { useCode } from './factor.js'
import { confirmSetup, startSetup } from './service.js'
import {
  consumeMfaToken,
  failMfaToken,
  findMfaToken,
  findUserOtp,
  insertMfaToken,
  lockMfaToken,
} from './queries.js'
import { completeLogin, loginFailure } from '../sessions/complete-login.js'
import { newRefreshTokenFor, refreshTokenTenant } from '../sessions/refresh-token.js'

// The second step of a login that needs a second factor (openapi/paths/otp.yaml, docs/decisions.md D13).

/** Seconds an mfaToken lives. */
const MFA_TOKEN_SECONDS = 300

/**
 * At POST /login, once the password has passed, for a user whose logins need a second factor: with an
 * `otp` of an enrolled user, uses it up (`totp` or `recovery`) or fails INVALID_OTP (a failed login for
 * throttling); without one, or before enrollment, issues an mfaToken and fails OTP_REQUIRED or
 * OTP_ENROLLMENT_REQUIRED with it in `details`. `failed` writes the LOGIN failure row.
 */
export async function secondFactorAtLogin(
  ctx: AppContext,
  s: {
    tenant: TenantInfo
    userId: string
    otp: string | undefined
    throttleKey: string
    failed: (code: ErrorCode) => Promise<AppError>
    countFailure: () => Promise<void>
    meta: RequestMeta
  },
): Promise<'totp' | 'recovery'> {
  const db = ctx.dbs.forTenant(s.tenant.id)
  const otpRow = await findUserOtp(db, s.tenant.id, s.userId)
  const enrolled = !!otpRow?.secret_enc
  if (enrolled && s.otp !== undefined) {
    const otp = s.otp
    // The per-user secret budget: charged before the code is judged, so a right code past it is refused.
    const check = new SecretCheck(ctx, s.tenant.id, s.userId, s.meta, () => s.failed('RATE_LIMIT_EXCEEDED'))
    return check.run('INVALID_OTP', async () => {
      await check.take()
      const used = await useCode(ctx, db, s.tenant.id, s.userId, otp, otpRow)
      if (used) return used
      await s.countFailure()
      throw await s.failed('INVALID_OTP')
    })
  }
  const nowMs = ctx.clock.now()
  // Why the refresh token's form: the tenant id it carries finds the tenant's database before any lookup.
  const mfaToken = newRefreshTokenFor(s.tenant.id)
  await insertMfaToken(db, {
    tenantId: s.tenant.id,
    userId: s.userId,
    hash: sha256Hex(mfaToken),
    enrollment: !enrolled,
    throttleKey: s.throttleKey,
    now: new Date(nowMs),
    expiresAt: new Date(nowMs + MFA_TOKEN_SECONDS * 1000),
  })
  const code = enrolled ? 'OTP_REQUIRED' : 'OTP_ENROLLMENT_REQUIRED'
  await s.failed(code)
  throw new AppError(code, undefined, { mfaToken, expiresIn: MFA_TOKEN_SECONDS })
}

/**
 * The live mfaToken, its tenant and its user; INVALID_CREDENTIALS (one LOGIN failure row) for anything
 * else, and 429 while the login's identifier is locked by account throttling.
 */
async function resolveMfaToken(ctx: AppContext, mfaToken: string, meta: RequestMeta) {
  const tenantId = refreshTokenTenant(mfaToken)
  const tenant = tenantId ? await ctx.tenants.byId(tenantId) : null
  if (!tenant) throw new AppError('INVALID_CREDENTIALS')
  const db = ctx.dbs.forTenant(tenant.id)
  const failed = (code: ErrorCode, userId: string | null, reason: string) =>
    loginFailure(db, tenant.id, meta, { code, userId, reason, errorMessage: code })
  if (tenant.status !== 'ACTIVE') throw await failed('INVALID_CREDENTIALS', null, 'tenant inactive')
  const token = await findMfaToken(db, tenant.id, sha256Hex(mfaToken), new Date(ctx.clock.now()))
  if (!token) throw await failed('INVALID_CREDENTIALS', null, 'unknown, used or expired mfaToken')
  const user = await findUserById(db, tenant.id, token.user_id)
  if (!user) throw await failed('INVALID_CREDENTIALS', null, 'user deleted')
  if (user.status !== 'ACTIVE')
    throw await failed('USER_INACTIVE', user.id, `user ${user.status.toLowerCase()}`)
  // Why: without it, one who knows the password could gather mfaTokens (a stopped login counts as no
  // failure) and guess codes past the identifier's lock.
  if (tenant.authConfig.lockout.enabled) {
    const { lockedSeconds } = await ctx.lockout.check(tenant.id, token.throttle_key, ctx.clock.now())
    if (lockedSeconds > 0) {
      await failed('INVALID_CREDENTIALS', user.id, 'identifier locked')
      throw lockedError(lockedSeconds)
    }
  }
  return { tenant, db, token, user, failed }
}

/**
 * POST /login/otp: the second step. A wrong code counts against the mfaToken (5 at most) and as a failed
 * login of the identifier; a right one uses the token up, and only then is the session opened. After an
 * enrollment (POST /login/otp/setup) the code confirms the new authenticator, and the answer adds the
 * recovery codes. Of concurrent calls with one code and one token, one succeeds: the code's step is
 * accepted once, and the token is deleted once.
 */
export async function verifyLoginOtp(
  ctx: AppContext,
  input: { mfaToken: string; code: string },
  meta: RequestMeta,
) {
  const { tenant, db, token, user, failed } = await resolveMfaToken(ctx, input.mfaToken, meta)
  // The per-user secret budget counts wrong codes across every mfaToken of the user (contract section 22).
  const check = new SecretCheck(ctx, tenant.id, user.id, meta, () =>
    failed('RATE_LIMIT_EXCEEDED', user.id, 'secret budget spent'),
  )
  return check.run('INVALID_OTP', async () => {
    await check.take()
    return secondStep(ctx, { tenant, db, token, user, failed }, input, meta)
  })
}

/** The code of a live mfaToken judged, under a charge of the user's secret budget; then the session. */
async function secondStep(
  ctx: AppContext,
  { tenant, db, token, user, failed }: Awaited<ReturnType<typeof resolveMfaToken>>,
  input: { code: string },
  meta: RequestMeta,
) {
  const now = new Date(ctx.clock.now())
  const wrongCode = async (count = true) => {
    if (count) await failMfaToken(db, tenant.id, token.id)
    await countLoginFailure(ctx, tenant, token.throttle_key, user.id, meta)
    return failed('INVALID_OTP', user.id, 'wrong or used code')
  }
  let recoveryCodes: string[] | undefined
  let factor: 'totp' | 'recovery' | null = 'totp'
  if (token.enrollment) {
    try {
      recoveryCodes = await db.transaction().execute(async (trx) => {
        if (!(await consumeMfaToken(trx, tenant.id, token.id, now))) throw new AppError('INVALID_CREDENTIALS')
        const codes = await confirmSetup(ctx, trx, tenant.id, user.id, input.code)
        await writeAudit(trx, {
          tenantId: tenant.id,
          action: 'OTP_ENABLED',
          success: true,
          userId: user.id,
          meta,
        })
        return codes
      })
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_OTP') throw await wrongCode()
      if (err instanceof AppError) throw await failed(err.code, user.id, err.message)
      throw err
    }
  } else {
    // Why the token row locked first: concurrent second steps with one token run one after another, so
    // the one whose code passes always finds its token, and the others find it gone.
    const outcome = await db.transaction().execute(async (trx) => {
      if (!(await lockMfaToken(trx, tenant.id, token.id, now))) return 'spent' as const
      const used = await useCode(ctx, trx, tenant.id, user.id, input.code)
      if (!used) {
        await failMfaToken(trx, tenant.id, token.id)
        return 'wrong' as const
      }
      await consumeMfaToken(trx, tenant.id, token.id, now)
      return used
    })
    if (outcome === 'spent') throw await failed('INVALID_CREDENTIALS', user.id, 'mfaToken used meanwhile')
    if (outcome === 'wrong') throw await wrongCode(false)
    factor = outcome
  }
  const opened = await completeLogin(ctx, tenant, user, meta, {
    reason: factor === 'recovery' ? 'recovery_code' : undefined,
    secondFactor: true,
  })
  if (!opened) throw await failed('USER_INACTIVE', user.id, 'user no longer active')
  if (tenant.authConfig.lockout.enabled) await ctx.lockout.succeeded(tenant.id, token.throttle_key)
  return recoveryCodes ? { ...opened, recoveryCodes } : opened
}

/** POST /login/otp/setup: the pending secret for the user of an enrollment mfaToken. */
export async function setupLoginOtp(ctx: AppContext, input: { mfaToken: string }, meta: RequestMeta) {
  const { tenant, token, user, failed } = await resolveMfaToken(ctx, input.mfaToken, meta)
  if (!token.enrollment)
    throw await failed('INVALID_CREDENTIALS', user.id, 'mfaToken not issued for an enrollment')
  return startSetup(ctx, tenant.id, user.id)
}
