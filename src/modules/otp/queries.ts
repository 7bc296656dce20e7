import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { setOtpEnabled } from '../users/queries.js'

// The second factor's tables: user_otp, otp_recovery_codes, mfa_tokens (migration 0004).

/** The user's TOTP row, or undefined. */
export function findUserOtp(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('user_otp')
    .select(['secret_enc', 'confirmed_at', 'pending_secret_enc', 'pending_expires_at', 'last_step'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

/** Stores a pending setup, replacing a former pending one; refused (undefined) when a secret is confirmed. */
export function putPendingSecret(
  db: Kysely<Database>,
  p: { tenantId: string; userId: string; secretEnc: string; expiresAt: Date },
) {
  return db
    .insertInto('user_otp')
    .values({
      tenant_id: p.tenantId,
      user_id: p.userId,
      pending_secret_enc: p.secretEnc,
      pending_expires_at: p.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({ pending_secret_enc: p.secretEnc, pending_expires_at: p.expiresAt })
        .where('user_otp.secret_enc', 'is', null),
    )
    .returning('user_id')
    .executeTakeFirst()
}

/**
 * Accepts TOTP `step` for the user, atomically: true only when it is later than every step accepted
 * before, so of two logins with one code exactly one passes, and a code is never accepted twice.
 */
export async function acceptStep(db: Kysely<Database>, tenantId: string, userId: string, step: number) {
  const row = await db
    .updateTable('user_otp')
    .set({ last_step: String(step) })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where(sql<boolean>`last_step < ${step}`)
    .returning('user_id')
    .executeTakeFirst()
  return row !== undefined
}

/** Makes the pending secret the confirmed one (its step already accepted) and sets the user's otp_enabled. */
export async function confirmPendingSecret(
  trx: Transaction<Database>,
  p: { tenantId: string; userId: string; secretEnc: string; step: number; now: Date },
): Promise<boolean> {
  const row = await trx
    .updateTable('user_otp')
    .set({
      secret_enc: p.secretEnc,
      confirmed_at: p.now,
      pending_secret_enc: null,
      pending_expires_at: null,
      last_step: String(p.step),
    })
    .where('tenant_id', '=', p.tenantId)
    .where('user_id', '=', p.userId)
    .where('pending_secret_enc', '=', p.secretEnc)
    .where('secret_enc', 'is', null)
    .returning('user_id')
    .executeTakeFirst()
  if (!row) return false
  await setOtpEnabled(trx, p.tenantId, p.userId, true)
  return true
}

/** Replaces the user's recovery codes with these hashes. */
export async function replaceRecoveryCodes(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  hashes: string[],
): Promise<void> {
  await trx
    .deleteFrom('otp_recovery_codes')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
  await trx
    .insertInto('otp_recovery_codes')
    .values(hashes.map((code_hash) => ({ tenant_id: tenantId, user_id: userId, code_hash })))
    .execute()
}

/** Uses one recovery code, atomically: true for exactly one caller per code. */
export async function useRecoveryCode(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  hash: string,
  now: Date,
) {
  const row = await db
    .updateTable('otp_recovery_codes')
    .set({ used_at: now })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Recovery codes the user has not used. */
export async function recoveryCodesLeft(db: Kysely<Database>, tenantId: string, userId: string) {
  const row = await db
    .selectFrom('otp_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Removes the user's second factor (secret, pending setup, recovery codes) and clears otp_enabled. */
export async function removeOtp(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
): Promise<boolean> {
  const gone = await trx
    .deleteFrom('user_otp')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .returning('secret_enc')
    .executeTakeFirst()
  await trx
    .deleteFrom('otp_recovery_codes')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
  await setOtpEnabled(trx, tenantId, userId, false)
  return gone?.secret_enc != null
}

/** Stores an mfaToken (its hash) and deletes the tenant's expired ones, so none pile up. */
export async function insertMfaToken(
  db: Kysely<Database>,
  t: {
    tenantId: string
    userId: string
    hash: string
    enrollment: boolean
    throttleKey: string
    now: Date
    expiresAt: Date
  },
): Promise<void> {
  await db
    .deleteFrom('mfa_tokens')
    .where('tenant_id', '=', t.tenantId)
    .where('expires_at', '<=', t.now)
    .execute()
  await db
    .insertInto('mfa_tokens')
    .values({
      tenant_id: t.tenantId,
      user_id: t.userId,
      token_hash: t.hash,
      enrollment: t.enrollment,
      throttle_key: t.throttleKey,
      expires_at: t.expiresAt,
      created_at: t.now,
    })
    .execute()
}

/** A live mfaToken by hash (not expired, fewer than 5 wrong codes), or undefined. */
export function findMfaToken(db: Kysely<Database>, tenantId: string, hash: string, now: Date) {
  return db
    .selectFrom('mfa_tokens')
    .select(['id', 'user_id', 'enrollment', 'throttle_key', 'failures'])
    .where('tenant_id', '=', tenantId)
    .where('token_hash', '=', hash)
    .where('expires_at', '>', now)
    .where('failures', '<', 5)
    .executeTakeFirst()
}

/** Locks a live mfaToken row (FOR UPDATE), so concurrent second steps with it run one after another. */
export function lockMfaToken(trx: Transaction<Database>, tenantId: string, id: string, now: Date) {
  return trx
    .selectFrom('mfa_tokens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .where('failures', '<', 5)
    .forUpdate()
    .executeTakeFirst()
}

/** Consumes an mfaToken: true for exactly one caller (it is deleted). */
export async function consumeMfaToken(trx: Kysely<Database>, tenantId: string, id: string, now: Date) {
  const row = await trx
    .deleteFrom('mfa_tokens')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .where('failures', '<', 5)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Counts a wrong code against an mfaToken; the fifth deletes it. */
export async function failMfaToken(db: Kysely<Database>, tenantId: string, id: string): Promise<void> {
  const row = await db
    .updateTable('mfa_tokens')
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning('failures')
    .executeTakeFirst()
  if (row && row.failures >= 5) {
    await db.deleteFrom('mfa_tokens').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
  }
}

/** Deletes every pending second step (mfaToken) of a user: a password reset ends what the old password began. */
export async function deleteUserMfaTokens(trx: Transaction<Database>, tenantId: string, userId: string) {
  await trx.deleteFrom('mfa_tokens').where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute()
}

/** Retention: mfaTokens expired before `now`, of these tenants only when given; how many went. */
export async function deleteExpiredMfaTokens(
  db: Kysely<Database>,
  now: Date,
  tenantIds?: readonly string[],
): Promise<number> {
  const only = tenantIds ? sql`and ${sql.ref('tenant_id')} = any(${tenantIds}::uuid[])` : sql``
  const r = await sql`delete from mfa_tokens where expires_at < ${now} ${only}`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
