import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { sha256Hex } from '../../lib/tokens.js'
import type { components } from '../../../generated/openapi.js'
import type { RequestMeta } from '../audit/write.js'
import { countLoginFailure, lockedError, userThrottleKeys } from '../account/lockout.js'
import { admitUser, completeLogin, loginFailure } from '../sessions/complete-login.js'
import { webauthnOf } from './config.js'
import { findPasskeyForLogin, insertChallenge, recordPasskeyUse, takeChallenge } from './queries.js'
import {
  CHALLENGE_MS,
  challengeOf,
  loginOptions,
  newChallenge,
  userHandleOf,
  verifyLogin,
} from './webauthn.js'

// Logging in with a passkey (contract section 21): a discoverable credential names its user, and the login
// ends in the same completion step as a password login (sessions/complete-login.ts).

type Schemas = components['schemas']

/** The ACTIVE tenant of a login by code (404 TENANT_NOT_FOUND otherwise, as at POST /login), and its settings. */
async function loginTenant(ctx: AppContext, tenantCode: string, meta: RequestMeta) {
  const tenant = await ctx.tenants.byCode(tenantCode)
  if (!tenant) throw new AppError('TENANT_NOT_FOUND')
  const db = ctx.dbs.forTenant(tenant.id)
  if (tenant.status !== 'ACTIVE') {
    throw await loginFailure(db, tenant.id, meta, {
      code: 'TENANT_NOT_FOUND',
      userId: null,
      reason: 'tenant inactive',
      method: 'passkey',
    })
  }
  return { tenant, db, cfg: webauthnOf(tenant) }
}

/** POST /login/passkey/options: request options with a new single-use challenge (5 minutes), no user named. */
export async function getPasskeyLoginOptions(
  ctx: AppContext,
  input: { tenantCode: string },
  meta: RequestMeta,
) {
  const { tenant, db, cfg } = await loginTenant(ctx, input.tenantCode, meta)
  const challenge = newChallenge()
  const expiresAt = new Date(ctx.clock.now() + CHALLENGE_MS)
  await insertChallenge(db, {
    tenantId: tenant.id,
    userId: null,
    purpose: 'login',
    hash: sha256Hex(challenge),
    expiresAt,
  })
  return loginOptions(cfg, challenge)
}

/**
 * POST /login/passkey. The challenge is used up first, whatever follows. Every way the answer can fail to
 * prove a passkey of this tenant is one 401 INVALID_CREDENTIALS (the reason only in the LOGIN row); then
 * the user's state (USER_INACTIVE, EMAIL_NOT_VERIFIED) and account throttling, as for a password, and the
 * same completion step. Never asks for a second factor: user verification is required.
 */
export async function loginWithPasskey(
  ctx: AppContext,
  input: { tenantCode: string; response: Schemas['AuthenticationResponse'] },
  meta: RequestMeta,
) {
  const { tenant, db, cfg } = await loginTenant(ctx, input.tenantCode, meta)
  const failed = (code: Parameters<typeof loginFailure>[3]['code'], userId: string | null, reason: string) =>
    loginFailure(db, tenant.id, meta, { code, userId, reason, method: 'passkey' })
  const now = new Date(ctx.clock.now())
  const challenge = challengeOf(input.response.response.clientDataJSON)
  const live =
    challenge !== null &&
    (await takeChallenge(db, {
      tenantId: tenant.id,
      userId: null,
      purpose: 'login',
      hash: sha256Hex(challenge),
      now,
    }))
  if (!live) throw await failed('INVALID_CREDENTIALS', null, 'unknown, used or expired challenge')
  // Why the tenant in the lookup: another tenant's credential is unknown here, with the same answer.
  const found = await findPasskeyForLogin(db, tenant.id, input.response.id)
  if (!found) throw await failed('INVALID_CREDENTIALS', null, 'unknown passkey')
  const userId = found.user_id
  const handle = input.response.response.userHandle
  if (handle !== undefined && handle !== userHandleOf(userId))
    throw await failed('INVALID_CREDENTIALS', userId, 'user handle does not match the passkey')

  // Account throttling (auth_config.lockout), keyed like a password login by the user's identifiers: a
  // locked identifier locks its user's passkeys too, and a failed proof counts against the first one.
  const lockout = tenant.authConfig.lockout
  const keys = lockout.enabled ? userThrottleKeys(found) : []
  let tracked = false
  for (const key of keys) {
    const state = await ctx.lockout.check(tenant.id, key, now.getTime())
    if (state.lockedSeconds > 0) {
      await failed('INVALID_CREDENTIALS', userId, 'identifier locked')
      throw lockedError(state.lockedSeconds)
    }
    tracked ||= state.tracked
  }

  const seen = Number(found.counter)
  const stored = {
    credentialId: input.response.id,
    publicKey: found.public_key,
    counter: seen,
    transports: found.transports,
  }
  const proof = await verifyLogin(cfg, input.response, challenge, stored)
  if (!proof) {
    if (keys[0]) await countLoginFailure(ctx, tenant, keys[0], userId, meta)
    throw await failed('INVALID_CREDENTIALS', userId, 'passkey did not verify')
  }
  // Why spelled out: `found` is the passkey's row, whose own `id` is not the user's.
  const user = { id: userId, status: found.status, email: found.email, email_verified: found.email_verified }
  await admitUser(ctx, tenant, user, (code, id, reason) => failed(code, id, reason))
  const use = { tenantId: tenant.id, id: found.id, seen: found.counter, now, ...proof }
  // Why conditional: two logins racing with one authenticator's signatures must not both move its counter.
  if (!(await recordPasskeyUse(db, use)))
    throw await failed('INVALID_CREDENTIALS', userId, 'passkey used concurrently')
  if (tracked) for (const key of keys) await ctx.lockout.succeeded(tenant.id, key)
  const opened = await completeLogin(
    ctx,
    tenant,
    { id: userId, email: found.email, username: found.username },
    meta,
    {
      method: 'passkey',
    },
  )
  if (!opened) throw await failed('USER_INACTIVE', userId, 'user no longer active')
  return opened
}
