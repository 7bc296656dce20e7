import type { Kysely } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { decryptSecret, encryptSecret } from '../../lib/crypto-box.js'
import { matchingStep, recoveryCodeHash, totpForm } from './codes.js'
import { acceptStep, findUserOtp, useRecoveryCode } from './queries.js'

// What every path that takes a code shares: sealing secrets, and checking a code once.

/** Seals a TOTP secret at rest with SECRETS_KEY, bound to its user. */
export function sealSecret(ctx: AppContext, userId: string, secret: string): string {
  return encryptSecret(secret, ctx.secretsKey, `otp:${userId}`)
}

/** Opens a sealed TOTP secret. */
export function openSecret(ctx: AppContext, userId: string, sealed: string): string {
  return decryptSecret(sealed, ctx.secretsKey, `otp:${userId}`)
}

/** The account an authenticator shows: the user's email, else username, else cpf_cnpj. */
export function accountName(u: { email: string | null; username: string | null; cpf_cnpj: string | null }) {
  return u.email ?? u.username ?? u.cpf_cnpj ?? 'user'
}

/**
 * Checks a code of an enrolled user and uses it up: a TOTP code whose step is later than every step
 * accepted before, or an unused recovery code. `totp` or `recovery` when it passed, null otherwise (wrong,
 * replayed, or no confirmed secret). Atomic: of concurrent callers with one code, one passes.
 */
export async function useCode(
  ctx: AppContext,
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  code: string,
  /** The user's TOTP row when the caller has just read it (no second read). */
  known?: Awaited<ReturnType<typeof findUserOtp>>,
): Promise<'totp' | 'recovery' | null> {
  const row = known ?? (await findUserOtp(db, tenantId, userId))
  if (!row?.secret_enc) return null
  const digits = totpForm(code)
  if (digits !== null) {
    const step = matchingStep(openSecret(ctx, userId, row.secret_enc), digits, ctx.clock.now())
    return step !== null && (await acceptStep(db, tenantId, userId, step)) ? 'totp' : null
  }
  const now = new Date(ctx.clock.now())
  return (await useRecoveryCode(db, tenantId, userId, recoveryCodeHash(code), now)) ? 'recovery' : null
}
