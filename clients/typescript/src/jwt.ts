import type { components } from './generated/schema.js'

/** The claims of an access token, as the document describes them. */
export type TokenClaims = components['schemas']['TokenClaims']

/**
 * The payload of a JWT, decoded but NOT verified (the client holds no key): use it to read `exp` or show
 * who is logged in, never to make an authorization decision. Null when the token is not a JWT.
 * Uses atob and TextDecoder only, so it runs in browsers and in Node 20+ alike.
 */
export function decodeJwtPayload(token: string): Partial<TokenClaims> | null {
  const part = token.split('.')[1]
  if (!part) return null
  try {
    const base64 = part.replace(/-/g, '+').replace(/_/g, '/')
    const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='))
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    const payload: unknown = JSON.parse(new TextDecoder().decode(bytes))
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload)
      ? (payload as Partial<TokenClaims>)
      : null
  } catch {
    return null
  }
}

/** The `exp` of an access token in milliseconds since the epoch, or null when it has none. */
export function expiresAtMs(token: string): number | null {
  const exp = decodeJwtPayload(token)?.exp
  return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null
}
