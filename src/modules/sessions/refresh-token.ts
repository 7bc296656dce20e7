import { randomBytes } from 'node:crypto'

// The form of refresh tokens (and of mfaTokens, which borrow it): the tenant id, then 32 random bytes.

const UUID_HEX = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/

/**
 * A new refresh token: base64url of the tenant id (16 bytes) and 32 random bytes. Opaque to clients;
 * the tenant part lets the service find the tenant's (possibly routed) database before any lookup.
 */
export function newRefreshTokenFor(tenantId: string): string {
  return Buffer.concat([Buffer.from(tenantId.replace(/-/g, ''), 'hex'), randomBytes(32)]).toString(
    'base64url',
  )
}

/** The tenant id a refresh token was issued for, or null when the value is not one of ours. */
export function refreshTokenTenant(token: string): string | null {
  if (token.length !== 64 || !/^[A-Za-z0-9_-]+$/.test(token)) return null
  const hex = Buffer.from(token, 'base64url').subarray(0, 16).toString('hex')
  const m = UUID_HEX.exec(hex)
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}` : null
}
