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

/** What a verified token says, kept so the same token presented again skips decoding and the HMAC. */
interface Verified {
  readonly tenantId: string
  readonly kid: string
  /** The secret that verified it: a hit counts only while the keystore still answers this secret. */
  readonly secret: Buffer
  readonly exp: number
  readonly userId: string
  readonly sessionId: string
  readonly roles: readonly string[]
  readonly permissions: ReadonlySet<string>
  readonly claims: Readonly<Record<string, unknown>>
}

// Why this bound: a client reuses its token for every call until it expires, so a small cache catches
// nearly every repeat; entries hold the token text (~1 KB), so 2,000 of them stay within a few MB.
const VERIFIED_CACHE_MAX = 2000

/**
 * Verifies bearer access tokens: HS256 only, key chosen by `kid` within the claimed tenant, then
 * expiry. Throws UNAUTHORIZED (or TOKEN_EXPIRED, only for a genuine token past `exp`). A token that
 * verified before is recognised by its exact text; the tenant's status, the secret behind its `kid`
 * and its expiry are still checked on every use, so a rotation, a cleared secret or an inactive tenant
 * refuses it exactly as the first check would.
 */
export class AccessTokenVerifier {
  private readonly verified = new Map<string, Verified>()

  constructor(
    private readonly keystore: Keystore,
    private readonly tenants: TenantCache,
  ) {}

  /** The user principal of a valid access token. */
  async verify(token: string, nowMs: number): Promise<UserPrincipal> {
    const v = this.verified.get(token) ?? (await this.verifyFully(token, nowMs))
    const tenant = await this.tenants.byId(v.tenantId)
    const secret = tenant ? await this.keystore.verificationKey(v.tenantId, v.kid) : null
    if (!tenant || !secret || !secret.equals(v.secret)) {
      this.verified.delete(token)
      throw new AppError('UNAUTHORIZED', 'Invalid token')
    }
    // RFC 7519 4.1.4: the token must not be accepted "on or after" exp.
    if (nowMs / 1000 >= v.exp) {
      this.verified.delete(token)
      throw new AppError('TOKEN_EXPIRED', 'Token expired')
    }
    if (tenant.status !== 'ACTIVE') throw new AppError('UNAUTHORIZED', 'Tenant is inactive')
    return {
      kind: 'user',
      userId: v.userId,
      sessionId: v.sessionId,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      isPlatform: tenant.isPlatform,
      roles: v.roles,
      permissions: v.permissions,
      claims: v.claims,
    }
  }

  private async verifyFully(token: string, nowMs: number): Promise<Verified> {
    const decoded = decodeJwtUnverified(token)
    const tenantId = decoded?.payload.tenantId
    const kid = decoded?.header.kid
    if (
      !decoded ||
      typeof tenantId !== 'string' ||
      typeof kid !== 'string' ||
      decoded.header.alg !== 'HS256'
    ) {
      throw new AppError('UNAUTHORIZED', 'Invalid token')
    }
    const tenant = await this.tenants.byId(tenantId)
    const secret = tenant ? await this.keystore.verificationKey(tenantId, kid) : null
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
    const v: Verified = {
      tenantId,
      kid,
      secret,
      exp: p.exp as number,
      userId: p.userId,
      sessionId: p.sid,
      roles,
      permissions: new Set(permissions),
      claims: p,
    }
    if (this.verified.size >= VERIFIED_CACHE_MAX) {
      // Why the oldest insertion: cheap, and a token still in use is simply verified and kept again.
      const oldest = this.verified.keys().next()
      if (!oldest.done) this.verified.delete(oldest.value)
    }
    this.verified.set(token, v)
    return v
  }
}
