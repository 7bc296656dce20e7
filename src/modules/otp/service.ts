import type { Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { tdb, type AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import type { UserPrincipal } from '../../security/principal.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { findUserById } from '../users/queries.js'
import { SecretCheck } from '../account/secret-check.js'
import {
  matchingStep,
  newOtpSecret,
  newRecoveryCodes,
  PENDING_SETUP_MS,
  recoveryCodeHash,
  setupAnswer,
  totpForm,
} from './codes.js'
import { accountName, openSecret, sealSecret, useCode } from './factor.js'
import {
  confirmPendingSecret,
  findUserOtp,
  putPendingSecret,
  recoveryCodesLeft,
  removeOtp,
  replaceRecoveryCodes,
} from './queries.js'

/**
 * A pending setup for a user (used by POST /me/otp/setup and POST /login/otp/setup): a new secret that
 * replaces a pending one, sealed, for 10 minutes. OTP_ALREADY_ENABLED when a secret is confirmed.
 */
export async function startSetup(ctx: AppContext, tenantId: string, userId: string) {
  const db = ctx.dbs.forTenant(tenantId)
  const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  const user = (await findUserById(db, tenantId, userId)) ?? fail('USER_NOT_FOUND')
  const secret = newOtpSecret()
  const expiresAt = new Date(ctx.clock.now() + PENDING_SETUP_MS)
  const stored = await putPendingSecret(db, {
    tenantId,
    userId,
    secretEnc: sealSecret(ctx, userId, secret),
    expiresAt,
  })
  if (!stored) fail('OTP_ALREADY_ENABLED')
  return setupAnswer(secret, tenant.name, accountName(user), expiresAt)
}

/**
 * Confirms the pending setup with a code of it: the secret becomes the user's factor, otp_enabled is set,
 * and 10 recovery codes are made. OTP_NOT_ENROLLED without a live pending setup; INVALID_OTP for a wrong
 * code. Runs in the caller's audited transaction when given one.
 */
export async function confirmSetup(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  code: string,
): Promise<string[]> {
  const row = await findUserOtp(trx, tenantId, userId)
  const now = ctx.clock.now()
  if (
    !row?.pending_secret_enc ||
    !row.pending_expires_at ||
    new Date(row.pending_expires_at).getTime() <= now
  ) {
    fail('OTP_NOT_ENROLLED', 'No pending second-factor setup (or it expired)')
  }
  const digits = totpForm(code)
  const step =
    digits === null ? null : matchingStep(openSecret(ctx, userId, row.pending_secret_enc), digits, now)
  if (step === null) fail('INVALID_OTP')
  const done = await confirmPendingSecret(trx, {
    tenantId,
    userId,
    secretEnc: row.pending_secret_enc,
    step,
    now: new Date(now),
  })
  if (!done) fail('OTP_NOT_ENROLLED', 'The pending setup was replaced or confirmed meanwhile')
  const codes = newRecoveryCodes()
  await replaceRecoveryCodes(trx, tenantId, userId, codes.map(recoveryCodeHash))
  return codes
}

/** GET /me/otp: the caller's second-factor status. */
export async function getMyOtp(ctx: AppContext, actor: UserPrincipal) {
  const db = tdb(ctx, actor)
  const tenant = (await ctx.tenants.byId(actor.tenantId)) ?? fail('TENANT_NOT_FOUND')
  const user = (await findUserById(db, actor.tenantId, actor.userId)) ?? fail('USER_NOT_FOUND')
  const row = await findUserOtp(db, actor.tenantId, actor.userId)
  const pending =
    !!row?.pending_secret_enc &&
    !!row.pending_expires_at &&
    new Date(row.pending_expires_at).getTime() > ctx.clock.now()
  return {
    otpEnabled: user.otp_enabled,
    enrolled: !!row?.secret_enc,
    pendingSetup: pending,
    recoveryCodesLeft: row?.secret_enc ? await recoveryCodesLeft(db, actor.tenantId, actor.userId) : 0,
    requiredByTenant: tenant.authConfig.mfa.required,
  }
}

/** POST /me/otp/setup: a pending secret for the caller (10 minutes). */
export function setupMyOtp(ctx: AppContext, actor: UserPrincipal) {
  return startSetup(ctx, actor.tenantId, actor.userId)
}

/**
 * POST /me/otp/confirm: proves the pending secret; the factor counts from now. One OTP_ENABLED row. The code
 * is a check of the user's secret budget (charged in `before`, so a refusal has its failure row).
 */
export function confirmMyOtp(ctx: AppContext, actor: UserPrincipal, code: string, meta: RequestMeta) {
  const { tenantId, userId } = actor
  const check = new SecretCheck(ctx, tenantId, userId, meta)
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'OTP_ENABLED', actor, meta, note: { userId, metadata: {} } },
    {
      before: () => check.take(),
      act: async (trx) => ({
        otpEnabled: true as const,
        recoveryCodes: await confirmSetup(ctx, trx, tenantId, userId, code),
      }),
    },
  ).then(check.passed, check.failedWith('INVALID_OTP'))
}

/**
 * An enrolled user's valid code, checked before the act it allows (OTP_NOT_ENROLLED, INVALID_OTP), under a
 * charge of the user's secret budget (429 once it is spent, before the code is judged).
 */
async function requireCode(ctx: AppContext, actor: UserPrincipal, code: string, check: SecretCheck) {
  const db = tdb(ctx, actor)
  const row = await findUserOtp(db, actor.tenantId, actor.userId)
  if (!row?.secret_enc) fail('OTP_NOT_ENROLLED')
  await check.take()
  if (!(await useCode(ctx, db, actor.tenantId, actor.userId, code, row))) fail('INVALID_OTP')
}

/** POST /me/otp/recovery-codes: a new set of recovery codes for a valid code. One OTP_RECOVERY_CODES_RENEWED row. */
export function renewMyRecoveryCodes(ctx: AppContext, actor: UserPrincipal, code: string, meta: RequestMeta) {
  const { tenantId, userId } = actor
  const codes = newRecoveryCodes()
  const check = new SecretCheck(ctx, tenantId, userId, meta)
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'OTP_RECOVERY_CODES_RENEWED', actor, meta, note: { userId, metadata: {} } },
    {
      before: () => requireCode(ctx, actor, code, check),
      act: async (trx) => {
        await replaceRecoveryCodes(trx, tenantId, userId, codes.map(recoveryCodeHash))
        return { recoveryCodes: codes }
      },
    },
  ).then(check.passed, check.failedWith('INVALID_OTP'))
}

/** DELETE /me/otp: removes the caller's factor for a valid code, unless the tenant requires one. One OTP_DISABLED row. */
export function disableMyOtp(ctx: AppContext, actor: UserPrincipal, code: string, meta: RequestMeta) {
  const { tenantId, userId } = actor
  const check = new SecretCheck(ctx, tenantId, userId, meta)
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'OTP_DISABLED', actor, meta, note: { userId, metadata: {} } },
    {
      before: async () => {
        const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
        if (tenant.authConfig.mfa.required)
          fail('FORBIDDEN', 'The tenant requires a second factor of every user')
        await requireCode(ctx, actor, code, check)
      },
      act: async (trx) => {
        await removeOtp(trx, tenantId, userId)
        return { otpEnabled: false as const }
      },
    },
  ).then(check.passed, check.failedWith('INVALID_OTP'))
}
