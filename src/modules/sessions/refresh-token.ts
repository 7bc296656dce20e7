import { randomBytes } from 'node:crypto'
import { sha256Hex } from '../../lib/tokens.js'
import type { RefreshTokenLookup } from './queries.js'

// The forms of refresh tokens. Since migration 0020 a refresh token is a selector and a verifier: the
// tenant id, the token row's id (the selector, its primary key), then 32 random bytes; the row keeps only
// the SHA-256 of the whole value. Why: the lookup by a random 64-character hash read and wrote one random
// leaf of a unique index per refresh, an index the size of shared buffers at a million sessions (issue 45,
// docs/performance.md); the row id is a UUIDv7, so a refresh finds a recent row in the primary key's hot
// end and the successor is appended there. The older form (the tenant id, then 32 random bytes, looked up
// by its hash) is still read until the last of them expires; mfaTokens keep it.

const UUID_HEX = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/
const BASE64URL = /^[A-Za-z0-9_-]+$/
/** base64url lengths of the two forms: 48 bytes (tenant, random) and 64 (tenant, row id, random). */
const HASHED_LENGTH = 64
const SELECTOR_LENGTH = 86

const uuidOf = (bytes: Buffer): string | null => {
  const m = UUID_HEX.exec(bytes.toString('hex'))
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}` : null
}
const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex')

/**
 * A value of the older form: base64url of the tenant id (16 bytes) and 32 random bytes. The tenant part
 * lets the service find the tenant's (possibly routed) database before any lookup. mfaTokens use it.
 */
export function newRefreshTokenFor(tenantId: string): string {
  return Buffer.concat([uuidBytes(tenantId), randomBytes(32)]).toString('base64url')
}

/**
 * A refresh token of the selector form for the row `id`: base64url of the tenant id, the row id and
 * 32 random bytes (256 bits no database holds).
 */
export function newSelectorToken(tenantId: string, id: string): string {
  return Buffer.concat([uuidBytes(tenantId), uuidBytes(id), randomBytes(32)]).toString('base64url')
}

/** The tenant id a refresh token (or mfaToken) was issued for, or null when the value is not one of ours. */
export function refreshTokenTenant(token: string): string | null {
  if ((token.length !== HASHED_LENGTH && token.length !== SELECTOR_LENGTH) || !BASE64URL.test(token))
    return null
  return uuidOf(Buffer.from(token, 'base64url').subarray(0, 16))
}

/**
 * The lookup of a presented refresh token, with the tenant it names (decoded once, for the hot path);
 * null when it is not of either form.
 */
export function refreshTokenLookup(token: string): (RefreshTokenLookup & { tenantId: string }) | null {
  if ((token.length !== HASHED_LENGTH && token.length !== SELECTOR_LENGTH) || !BASE64URL.test(token))
    return null
  const bytes = Buffer.from(token, 'base64url')
  const tenantId = uuidOf(bytes.subarray(0, 16))
  if (tenantId === null) return null
  const hash = sha256Hex(token)
  if (token.length === HASHED_LENGTH) return { tenantId, id: null, hash }
  const id = uuidOf(bytes.subarray(16, 32))
  return id ? { tenantId, id, hash } : null
}
