import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Length of the display prefix kept for a Client Key (`ck_` plus 9 characters of the secret part). */
export const KEY_PREFIX_LENGTH = 12

// Why an upper bound: the shape check runs on unauthenticated input before any lookup, so it also
// caps how much a caller can make us hash. 43 is 256 bits in base64url; operators may bootstrap longer keys.
const CLIENT_KEY_RE = /^ck_[A-Za-z0-9_-]{43,256}$/

/** Returns `bytes` cryptographically random bytes as unpadded base64url (32 bytes → 43 characters). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, the version and variant, then 74 random bits. Why for
 * refresh token ids: a key that grows with time appends at its index's right edge, where a random UUID
 * touches a random leaf page per insert (one more page to read and dirty per refresh on a large table).
 * Not for values a client must not learn the creation time of.
 */
export function uuidV7(nowMs: number): string {
  const b = randomBytes(16)
  b.writeUIntBE(nowMs, 0, 6)
  b[6] = ((b[6] as number) & 0x0f) | 0x70
  b[8] = ((b[8] as number) & 0x3f) | 0x80
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** SHA-256 of the UTF-8 bytes of `s` as 64 lowercase hex characters: how keys and tokens are stored. */
export function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex')
}

/** A new Client Key value: `ck_` followed by 43 base64url characters (256 random bits). Shown once. */
export function newClientKeyValue(): string {
  return 'ck_' + randomToken(32)
}

/** The display prefix of a key value (its first 12 characters); safe to store and show. */
export function keyPrefix(value: string): string {
  return value.slice(0, KEY_PREFIX_LENGTH)
}

/** True when `s` has the shape of a Client Key (`ck_` + 43..256 base64url characters); not that it exists. */
export function isClientKeyShape(s: string): boolean {
  return CLIENT_KEY_RE.test(s)
}

/** A new opaque refresh token (256 random bits, base64url); store only its `sha256Hex`. */
export function newRefreshToken(): string {
  return randomToken(32)
}

/** A short random key id for a signing secret (72 bits, 12 base64url characters). */
export function newKid(): string {
  // Why this is enough: a kid is looked up within one tenant, never globally, so it only has to differ
  // from that tenant's current and previous kid.
  return randomToken(9)
}

/** Compares two strings in time independent of where they differ and of their lengths. */
export function timingSafeEqualStr(a: string, b: string): boolean {
  // Why hash first: timingSafeEqual needs equal lengths, and an early length check would leak the length.
  const da = createHash('sha256').update(a, 'utf8').digest()
  const db = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(da, db)
}
