import { randomUUID } from 'node:crypto'
import { AppError } from '../errors.js'
import { decodeJwtUnverified, signJwt, verifyJwt } from '../lib/jwt.js'
import type { TenantCache } from '../modules/tenants/cache.js'
import type { Keystore } from './keystore.js'
import type { UserPrincipal } from './principal.js'

/** What an access token says about its user (contract section 2). */
export interface TokenSubject {
  readonly userId: string
  readonly tenantId: string
  readonly tenantCode: string
  readonly email: string | null
  readonly username: string | null
  readonly roles: readonly string[]
  readonly permissions: readonly string[]
  readonly sessionId: string
}

/** Signs an access token with the tenant's current key; returns it with its lifetime in seconds. */
export async function issueAccessToken(
  keystore: Keystore,
  s: TokenSubject,
  lifetimeSeconds: number,
  nowMs: number,
): Promise<{ accessToken: string; expiresIn: number }> {
  const key = await keystore.signingKey(s.tenantId)
  const iat = Math.floor(nowMs / 1000)
  const payload = {
    sub: s.userId,
    userId: s.userId,
    tenantId: s.tenantId,
    tenantCode: s.tenantCode,
    email: s.email,
    username: s.username,
    roles: [...s.roles],
    permissions: [...new Set(s.permissions)],
    sid: s.sessionId,
    iat,
    exp: iat + lifetimeSeconds,
    jti: randomUUID(),
  }
  return { accessToken: signJwt(payload, key.secret, key.kid), expiresIn: lifetimeSeconds }
}

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null

/**
 * Verifies a bearer access token: HS256 only, key chosen by `kid` within the claimed tenant, then
 * expiry. Throws UNAUTHORIZED (or TOKEN_EXPIRED, only for a genuine token past `exp`).
 */
export async function verifyAccessToken(
  keystore: Keystore,
  tenants: TenantCache,
  token: string,
  nowMs: number,
): Promise<UserPrincipal> {
  const decoded = decodeJwtUnverified(token)
  const tenantId = decoded?.payload.tenantId
  const kid = decoded?.header.kid
  if (!decoded || typeof tenantId !== 'string' || typeof kid !== 'string' || decoded.header.alg !== 'HS256') {
    throw new AppError('UNAUTHORIZED', 'Invalid token')
  }
  const tenant = await tenants.byId(tenantId)
  const secret = tenant ? await keystore.verificationKey(tenantId, kid) : null
  if (!tenant || !secret) throw new AppError('UNAUTHORIZED', 'Invalid token')
  const result = verifyJwt(token, () => secret, nowMs)
  if (!result.ok) {
    throw result.reason === 'expired'
      ? new AppError('TOKEN_EXPIRED', 'Token expired')
      : new AppError('UNAUTHORIZED', 'Invalid token')
  }
  const p = result.payload
  const permissions = strings(p.permissions)
  const roles = strings(p.roles)
  if (typeof p.userId !== 'string' || typeof p.sid !== 'string' || !permissions || !roles) {
    throw new AppError('UNAUTHORIZED', 'Invalid token')
  }
  if (tenant.status !== 'ACTIVE') throw new AppError('UNAUTHORIZED', 'Tenant is inactive')
  return {
    kind: 'user',
    userId: p.userId,
    sessionId: p.sid,
    tenantId: tenant.id,
    tenantCode: tenant.code,
    isPlatform: tenant.isPlatform,
    roles,
    permissions: new Set(permissions),
    claims: p,
  }
}
