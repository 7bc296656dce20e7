import type { Kysely } from 'kysely'
import type { Database } from '../src/db/database.js'
import { deriveKey } from '../src/lib/crypto-box.js'
import { randomToken } from '../src/lib/tokens.js'
import { challengeHmacKey, issueChallenge } from '../src/modules/publishable-keys/challenge.js'
import { insertPublishableKey } from '../src/modules/publishable-keys/queries.js'

// The POST /signup workload of `make bench`: a publishable key of the bench tenant, and proofs of work
// made before the timed loop. Why minted, not solved: the bench knows SECRETS_KEY, so it makes each
// challenge with its number chosen (what a solver would find); the service's work per request, one
// SHA-256 and one HMAC to verify, the used-solution claim, the budgets and the bcrypt hash, is the same.

export const SIGNUP_ORIGIN = 'https://bench.example.test'

/** A key allowing SIGNUP_ORIGIN, and `count` solved `altcha` payloads for it. */
export async function prepareSignups(
  db: Kysely<Database>,
  tenantId: string,
  secretsKey: string,
  count: number,
): Promise<{ key: string; payloads: string[] }> {
  const key = `pk_${randomToken(32)}`
  const row = await insertPublishableKey(db, {
    tenantId,
    name: 'bench',
    key,
    allowedOrigins: [SIGNUP_ORIGIN],
    defaultRoles: ['user'],
    signupsPerHour: 10_000,
  })
  if (!row) throw new Error('bench publishable key not stored')
  const hmacKey = challengeHmacKey(deriveKey(secretsKey))
  const payloads: string[] = []
  for (let i = 0; i < count; i++) {
    const c = await issueChallenge(hmacKey, row.id, 1000, Date.now())
    const number = await numberOf(c.challenge, c.salt, c.maxnumber ?? 1000)
    const p = { algorithm: c.algorithm, challenge: c.challenge, number, salt: c.salt, signature: c.signature }
    payloads.push(Buffer.from(JSON.stringify(p)).toString('base64'))
  }
  return { key, payloads }
}

/** The number a solver would find (a small range: outside the timed loop, and cheap). */
async function numberOf(challenge: string, salt: string, max: number): Promise<number> {
  const { createHash } = await import('node:crypto')
  for (let n = 0; n <= max; n++)
    if (
      createHash('sha256')
        .update(salt + String(n))
        .digest('hex') === challenge
    )
      return n
  throw new Error('unsolvable challenge')
}

/** A distinct client address per request (TRUST_PROXY=loopback): the per-IP budget is 10 an hour. */
export function benchIp(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
}
