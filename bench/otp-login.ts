// The two-step login workload of `make bench` (POST /login → 401 OTP_REQUIRED, then POST /login/otp):
// users with a confirmed TOTP secret are written straight to the database, each used once (a step once
// accepted is never accepted again for a user), so the run needs as many users as two-step logins.
import type { Kysely } from 'kysely'
import { Secret, TOTP } from 'otpauth'
import type autocannon from 'autocannon'
import type { Database } from '../src/db/database.js'
import { deriveKey, encryptSecret } from '../src/lib/crypto-box.js'

/** How many users the workload can log in with; enough for the run on this machine (bcrypt-bound). */
export const OTP_USERS = 2000

export interface OtpUser {
  email: string
  totp: TOTP
}

/** Writes `OTP_USERS` enrolled users of the tenant (password `hash`), secrets sealed with `secretsKey`. */
export async function seedOtpUsers(
  db: Kysely<Database>,
  tenantId: string,
  hash: string,
  secretsKey: string,
): Promise<OtpUser[]> {
  const key = deriveKey(secretsKey)
  const out: OtpUser[] = []
  for (let start = 0; start < OTP_USERS; start += 500) {
    const batch = Array.from({ length: Math.min(500, OTP_USERS - start) }, (_, i) => ({
      email: `otp${start + i}@example.test`,
      secret: new Secret({ size: 20 }),
    }))
    const rows = await db
      .insertInto('users')
      .values(
        batch.map((b) => ({ tenant_id: tenantId, email: b.email, password_hash: hash, otp_enabled: true })),
      )
      .returning(['id', 'email'])
      .execute()
    await db
      .insertInto('user_otp')
      .values(
        rows.map((r, i) => ({
          tenant_id: tenantId,
          user_id: r.id,
          secret_enc: encryptSecret(batch[i]?.secret.base32 ?? '', key, `otp:${r.id}`),
          confirmed_at: new Date(),
        })),
      )
      .execute()
    for (const b of batch) {
      out.push({
        email: b.email,
        totp: new TOTP({ secret: b.secret, algorithm: 'SHA1', digits: 6, period: 30 }),
      })
    }
  }
  return out
}

/** Two-step logins completed and failed (a first step that is not 401 OTP_REQUIRED, or a second that is not 200). */
export interface TwoStepTally {
  completed: number
  failed: number
}

/**
 * autocannon requests for one two-step login per sequence: the password, then the code. autocannon counts
 * every expected 401 of the first step as an error, so `tally` says what really happened.
 */
export function twoStepRequests(
  users: OtpUser[],
  tenantCode: string,
  password: string,
  tally: TwoStepTally,
): autocannon.Request[] {
  let next = 0
  const current = new Map<unknown, OtpUser>()
  return [
    {
      method: 'POST',
      path: '/api/v1/login',
      setupRequest: (req, context) => {
        const user = users[next++ % users.length] as OtpUser
        current.set(context, user)
        return { ...req, body: JSON.stringify({ tenantCode, identifier: user.email, password }) }
      },
      onResponse: (status, body, context) => {
        const parsed = JSON.parse(body)
        if (status !== 401 || parsed.code !== 'OTP_REQUIRED') tally.failed++
        ;(context as { mfaToken?: string }).mfaToken = parsed.details?.mfaToken
      },
    },
    {
      method: 'POST',
      path: '/api/v1/login/otp',
      setupRequest: (req, context) => {
        const user = current.get(context) as OtpUser
        const mfaToken = (context as { mfaToken?: string }).mfaToken
        return { ...req, body: JSON.stringify({ mfaToken, code: user.totp.generate() }) }
      },
      onResponse: (status) => {
        if (status === 200) tally.completed++
        else tally.failed++
      },
    },
  ]
}
