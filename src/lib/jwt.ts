import { createHmac, timingSafeEqual } from 'node:crypto'

/** A decoded JOSE header; only `alg`, `typ` and `kid` mean anything to us. */
export interface JwtHeader {
  alg?: unknown
  typ?: unknown
  kid?: unknown
  [key: string]: unknown
}

/** A decoded claims set. Unverified until verifyJwt says ok. */
export type JwtPayload = Record<string, unknown>

/** Why a token was refused; the caller maps `expired` to TOKEN_EXPIRED and the rest to UNAUTHORIZED. */
export type JwtFailure = 'malformed' | 'alg' | 'kid' | 'signature' | 'expired'

/** Result of verifyJwt. On failure nothing of the token is returned, so nothing unverified leaks into use. */
export type JwtVerifyResult =
  | { ok: true; header: JwtHeader & { alg: 'HS256'; kid: string }; payload: JwtPayload }
  | { ok: false; reason: JwtFailure }

/**
 * Chooses the verification secret from the still-unverified header and payload (kid, tenantId), or null
 * when there is none. It must not trust anything else in them: the signature is checked afterwards.
 */
export type SecretResolver = (header: JwtHeader & { kid: string }, payload: JwtPayload) => Buffer | null

/**
 * Longest token we parse. Why 16 KiB: access tokens carry the permission list, which grows with a
 * tenant's custom permissions, and Node refuses request headers over 16 KiB in total anyway.
 */
export const MAX_JWT_LENGTH = 16 * 1024

/** Tolerated clock skew for `iat` and `nbf` in the future, in seconds (instances' clocks differ slightly). */
export const JWT_CLOCK_SKEW_SECONDS = 60

/**
 * The longest lifetime (`exp - iat`) accepted, in seconds: the largest accessTokenExpiresIn a tenant can
 * set. Why: a tenant holding its own secret could otherwise mint a token that never expires.
 */
export const MAX_JWT_LIFETIME_SECONDS = 86_400

const MAX_KID_LENGTH = 128
const HS256_SIGNATURE_LENGTH = 43 // 32 bytes of HMAC-SHA-256, base64url without padding
const B64URL_RE = /^[A-Za-z0-9_-]*$/
const B64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Signs `payload` as an HS256 JWS with header exactly `{ alg: 'HS256', typ: 'JWT', kid }`. */
export function signJwt(payload: object, secret: Buffer | string, kid: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid })).toString('base64url')
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const input = `${header}.${body}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/**
 * Splits and decodes a compact JWS without checking anything cryptographic: exactly three parts,
 * canonical unpadded base64url, header and payload JSON objects, at most MAX_JWT_LENGTH characters.
 * The signature part may be empty (so `alg: none` tokens reach the alg check and are named as such).
 */
export function decodeJwtUnverified(token: string): { header: JwtHeader; payload: JwtPayload } | null {
  if (typeof token !== 'string' || token.length > MAX_JWT_LENGTH) return null
  const dot1 = token.indexOf('.')
  const dot2 = dot1 < 0 ? -1 : token.indexOf('.', dot1 + 1)
  if (dot2 < 0 || token.indexOf('.', dot2 + 1) >= 0) return null
  const header = decodeJsonObject(token.slice(0, dot1))
  if (header === null) return null
  const payload = decodeJsonObject(token.slice(dot1 + 1, dot2))
  if (payload === null || !isCanonicalB64url(token.slice(dot2 + 1))) return null
  return { header, payload }
}

/**
 * True when the token's third part is the HS256 HMAC of its first two under `secret`, compared in
 * constant time. Checks nothing else (not alg, not expiry); false for anything malformed.
 */
export function verifyJwtSignature(token: string, secret: Buffer | string): boolean {
  if (typeof token !== 'string' || token.length > MAX_JWT_LENGTH) return false
  const lastDot = token.lastIndexOf('.')
  if (lastDot < 0 || token.length - lastDot - 1 !== HS256_SIGNATURE_LENGTH) return false
  const sig = token.slice(lastDot + 1)
  if (!isCanonicalB64url(sig)) return false
  const expected = createHmac('sha256', secret).update(token.slice(0, lastDot)).digest()
  return timingSafeEqual(expected, Buffer.from(sig, 'base64url'))
}

/**
 * Verifies an access token: shape, `alg` exactly HS256, a non-empty `kid`, the secret chosen by
 * `resolveSecret`, the signature, and only then the time claims, so a forged expired token reports
 * `signature`, never `expired`. `exp` and `iat` must be numbers, `exp - iat` at most a day; `iat`/`nbf`
 * more than 60 s in the future are `malformed`. `nowMs` is epoch milliseconds (Clock.now()); claims are in seconds.
 */
export function verifyJwt(token: string, resolveSecret: SecretResolver, nowMs: number): JwtVerifyResult {
  const decoded = decodeJwtUnverified(token)
  if (decoded === null) return { ok: false, reason: 'malformed' }
  const { header, payload } = decoded
  if (header.alg !== 'HS256') return { ok: false, reason: 'alg' }
  // Why refuse `crit`: it names extensions we would be required to understand (RFC 7515 4.1.11).
  if ((header.typ !== undefined && header.typ !== 'JWT') || header.crit !== undefined) {
    return { ok: false, reason: 'malformed' }
  }
  const kid = header.kid
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) {
    return { ok: false, reason: 'kid' }
  }
  const checked = header as JwtHeader & { alg: 'HS256'; kid: string }
  const secret = resolveSecret(checked, payload)
  if (secret === null) return { ok: false, reason: 'kid' }
  if (!verifyJwtSignature(token, secret)) return { ok: false, reason: 'signature' }

  const failure = timeClaimsFailure(payload, nowMs)
  return failure ? { ok: false, reason: failure } : { ok: true, header: checked, payload }
}

/**
 * The time claims of a token whose signature has passed (whatever its algorithm): `exp` and `iat` numbers,
 * `exp - iat` at most a day, `iat`/`nbf` at most 60 s ahead (`malformed`), and not on or after `exp`
 * (`expired`, RFC 7519 4.1.4). Null when they hold.
 */
export function timeClaimsFailure(payload: JwtPayload, nowMs: number): 'malformed' | 'expired' | null {
  const now = nowMs / 1000
  const { exp, iat, nbf } = payload
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return 'malformed'
  if (typeof iat !== 'number' || exp - iat > MAX_JWT_LIFETIME_SECONDS) return 'malformed'
  if (!timeClaimAcceptable(iat, now) || !timeClaimAcceptable(nbf, now)) return 'malformed'
  return now >= exp ? 'expired' : null
}

/** A header we accept besides its `alg`: `typ` absent or JWT, no `crit`, and a kid of 1-128 characters. */
export function headerAcceptable(header: JwtHeader): header is JwtHeader & { kid: string } {
  // Why refuse `crit`: it names extensions we would be required to understand (RFC 7515 4.1.11).
  if ((header.typ !== undefined && header.typ !== 'JWT') || header.crit !== undefined) return false
  const kid = header.kid
  return typeof kid === 'string' && kid.length > 0 && kid.length <= MAX_KID_LENGTH
}

/** Absent, or a finite number not further in the future than the skew allows. */
function timeClaimAcceptable(v: unknown, now: number): boolean {
  if (v === undefined) return true
  return typeof v === 'number' && Number.isFinite(v) && v <= now + JWT_CLOCK_SKEW_SECONDS
}

function decodeJsonObject(part: string): Record<string, unknown> | null {
  if (part.length === 0 || !isCanonicalB64url(part)) return null
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  return value as Record<string, unknown>
}

/**
 * Unpadded base64url whose unused trailing bits are zero. Why canonical: Buffer's decoder skips
 * invalid characters and ignores stray bits, so several strings would otherwise decode to one value.
 */
function isCanonicalB64url(s: string): boolean {
  if (!B64URL_RE.test(s)) return false
  const rem = s.length % 4
  if (rem === 1) return false
  if (rem === 0) return true
  const last = B64URL_ALPHABET.indexOf(s.charAt(s.length - 1))
  return (last & (rem === 2 ? 0x0f : 0x03)) === 0
}
