import { createHmac } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Redis } from 'ioredis'
import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1'
import type { Database } from '../../db/database.js'
import { recordUsedChallenge } from './queries.js'

// The ALTCHA proof of work of the sign-up operations (contract section 20, docs/decisions.md D24), in
// the widget's own v1 format, so the stock widget solves it: the client finds `number` such that
// SHA-256(salt + number) is `challenge`; `signature` is our HMAC of `challenge`. The salt carries the
// expiry and the key the challenge was issued for, so it is covered by the signature too.

/** A challenge lives 10 minutes. */
export const CHALLENGE_TTL_MS = 10 * 60 * 1000

/** A decoded `altcha` payload that has the shape of one (not yet verified). */
interface Solution {
  algorithm: 'SHA-256'
  challenge: string
  number: number
  salt: string
  signature: string
}

/**
 * The HMAC key of challenges: derived from SECRETS_KEY's key material (ctx.secretsKey, itself an HKDF
 * output) under its own label, so it is never the key that seals stored secrets, and every instance
 * with the same SECRETS_KEY verifies the others' challenges.
 */
export function challengeHmacKey(secretsKey: Buffer): string {
  return createHmac('sha256', secretsKey).update('tessera:altcha-hmac:v1').digest('hex')
}

/** A new challenge for the key, expiring CHALLENGE_TTL_MS after `now`. */
export function issueChallenge(hmacKey: string, keyId: string, maxnumber: number, now: number) {
  return createChallenge({
    algorithm: 'SHA-256',
    hmacKey,
    maxnumber,
    expires: new Date(now + CHALLENGE_TTL_MS),
    params: { k: keyId },
  })
}

/**
 * Whether a sign-up body's `altcha` is missing or malformed while it is the body's only problem: such a
 * body is INVALID_CHALLENGE, as a wrong solution is (contract section 20), not VALIDATION_ERROR. An
 * `altcha` past the document's 4096 characters, or any other problem of the body, stays the schema's
 * (section 1: a documented limit is VALIDATION_ERROR before any other rule). `validBody` is the route's
 * own body validator.
 */
export function onlyTheSolutionIsWrong(body: unknown, validBody: (b: unknown) => boolean): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false
  const altcha = (body as { altcha?: unknown }).altcha
  if (typeof altcha === 'string' && (altcha.length > 4096 || /^[A-Za-z0-9+/=_-]+$/.test(altcha))) return false
  // Why a copy: the validator may fill in defaults, and the body must reach the schema as it came.
  return validBody({ ...body, altcha: 'A' })
}

/** The widget's payload (base64 of JSON) decoded, when it has the shape of a solution; else null. */
function decode(payload: string): Solution | null {
  let v: unknown
  try {
    v = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'))
  } catch {
    return null
  }
  if (typeof v !== 'object' || v === null) return null
  const s = v as Record<string, unknown>
  const hex64 = (x: unknown) => typeof x === 'string' && /^[0-9a-f]{64}$/.test(x)
  if (
    s.algorithm !== 'SHA-256' ||
    !hex64(s.challenge) ||
    !hex64(s.signature) ||
    typeof s.salt !== 'string' ||
    s.salt.length > 512 ||
    typeof s.number !== 'number' ||
    !Number.isSafeInteger(s.number) ||
    s.number < 0
  )
    return null
  return s as unknown as Solution
}

/**
 * Checks a solution: ours (signature), solved (challenge), for this key, not expired by `now`. Returns
 * what makes it single-use (its signature and the challenge's expiry), or null. Nothing is recorded.
 */
export async function checkSolution(
  hmacKey: string,
  payload: string,
  keyId: string,
  now: number,
): Promise<{ signature: string; expiresAt: Date } | null> {
  const s = decode(payload)
  if (!s) return null
  const params = extractParams(s)
  const expires = Number(params.expires) * 1000
  // Why our own expiry check: the service's clock decides (altcha-lib reads Date.now), and a salt
  // without `expires` was not made here.
  if (!Number.isFinite(expires) || expires <= now || params.k !== keyId) return null
  if (!(await verifySolution(s, hmacKey, false))) return null
  return { signature: s.signature, expiresAt: new Date(expires) }
}

/** Where used solutions are recorded, so that one is accepted once across every instance. */
export interface UsedSolutions {
  /** True for the first use of this signature, false for every later one. */
  claim(signature: string, expiresAt: Date, now: number): Promise<boolean>
  close(): void
}

/** The main database's signup_challenges_used table (swept by retention once expired). */
export class DbUsedSolutions implements UsedSolutions {
  constructor(private readonly db: Kysely<Database>) {}

  claim(signature: string, expiresAt: Date): Promise<boolean> {
    return recordUsedChallenge(this.db, signature, expiresAt)
  }

  close(): void {}
}

/**
 * Redis (REDIS_URL): `SET NX` with the challenge's remaining lifetime, so the key goes when the
 * challenge could no longer verify. When Redis does not answer, the database records the use instead:
 * it is shared too, and a sign-up never waits on nor fails for Redis.
 */
export class RedisUsedSolutions implements UsedSolutions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly fallback: UsedSolutions,
  ) {}

  async claim(signature: string, expiresAt: Date, now: number): Promise<boolean> {
    const ttl = Math.max(1000, expiresAt.getTime() - now)
    try {
      const done = await this.redis.set(`${this.prefix}${signature}`, '1', 'PX', ttl, 'NX')
      return done === 'OK'
    } catch {
      return this.fallback.claim(signature, expiresAt, now)
    }
  }

  close(): void {
    this.redis.disconnect()
  }
}
