import { randomUUID } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { AppError } from '../errors.js'
import { decodeJwtUnverified, headerAcceptable, signJwt, timeClaimsFailure, verifyJwt } from '../lib/jwt.js'
import { signAsymmetric, verifyAsymmetricSignature } from './asymmetric.js'
import type { Keystore, VerificationKey } from './keystore.js'
import type { TenantDirectory } from './lookups.js'
import { credentialPermissions, type UserPrincipal } from './principal.js'

/** What an access token says about its user (`TokenClaims`, openapi/components/auth.yaml). */
export interface TokenSubject {
  readonly userId: string
  readonly tenantId: string
  readonly tenantCode: string
  readonly email: string | null
  readonly username: string | null
  readonly roles: readonly string[]
  readonly permissions: readonly string[]
  readonly sessionId: string
  /**
   * `auth_time` (OIDC): seconds since the epoch of the login that opened the session; null leaves the
   * claim out (only test fixtures do, to stand for a token minted elsewhere).
   */
  readonly authTime: number | null
}

/**
 * Signs an access token with the tenant's current key; returns it with its lifetime in seconds. Tokens of
 * an asymmetric tenant (EdDSA, ES256) also carry `iss` = `{issuerBase}/t/{tenantCode}`.
 */
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
    ...(s.authTime === null ? {} : { auth_time: s.authTime }),
    iat,
    exp: iat + lifetimeSeconds,
    jti: randomUUID(),
  }
  if (key.alg === 'HS256')
    return { accessToken: signJwt(payload, key.secret, key.kid), expiresIn: lifetimeSeconds }
  const accessToken = await signAsymmetric({ ...payload, iss: keystore.issuer(s.tenantCode) }, key)
  return { accessToken, expiresIn: lifetimeSeconds }
}

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null

/** What a verified token says, kept so the same token presented again skips decoding and the HMAC. */
interface Verified {
  readonly tenantId: string
  readonly kid: string
  readonly alg: VerificationKey['alg']
  /** The key that verified it: a hit counts only while the keystore still answers this key. */
  readonly key: VerificationKey
  readonly exp: number
  readonly userId: string
  readonly sessionId: string
  readonly authTime: number | null
  readonly roles: readonly string[]
  readonly permissions: ReadonlySet<string>
  readonly claims: Readonly<Record<string, unknown>>
}

// Why these bounds: a client reuses its token for every call until it expires, so a small cache
// catches nearly every repeat. Tokens run from ~0.7 KB to 16 KB (a tenant admin's lists every
// permission of the tenant), so the token text is bounded too: the parsed claims take about as much
// again, keeping the whole cache under ~10 MB whatever the mix.
const VERIFIED_CACHE_MAX = 2000
const VERIFIED_CACHE_MAX_CHARS = 4_000_000

const invalid = () => new AppError('UNAUTHORIZED', 'Invalid token')

/**
 * Verifies bearer access tokens (HS256, EdDSA or ES256): key chosen by `kid` within the claimed tenant,
 * the token's `alg` that key's own, then expiry. Throws UNAUTHORIZED (or TOKEN_EXPIRED, only for a
 * genuine token past `exp`). A token that verified before is recognised by its exact text (least recently
 * used ones are forgotten first); the tenant's status, the key behind its `kid` and its expiry are still
 * checked on every use, so a retired or cleared key or an inactive tenant refuses it exactly as the first
 * check would.
 */
export class AccessTokenVerifier {
  private readonly verified = new LRUCache<string, Verified>({
    max: VERIFIED_CACHE_MAX,
    maxSize: VERIFIED_CACHE_MAX_CHARS,
    sizeCalculation: (_v, token) => token.length,
  })

  constructor(
    private readonly keystore: Keystore,
    private readonly tenants: TenantDirectory,
  ) {}

  /** The user principal of a valid access token. */
  async verify(token: string, nowMs: number): Promise<UserPrincipal> {
    const known = this.verified.get(token)
    const claimed = known ?? claimedKey(token)
    const tenant = await this.tenants.byId(claimed.tenantId)
    const key = tenant ? await this.keystore.verificationKey(claimed.tenantId, claimed.kid) : null
    // Why the algorithm too: the key named by `kid` decides it, so a token that names an EdDSA key and says
    // HS256 (the public key used as an HMAC secret) or the reverse is refused before any signature check.
    if (!tenant || !key || key.alg !== claimed.alg || (known && !sameKey(key, known.key))) {
      if (known) this.verified.delete(token)
      throw invalid()
    }
    const v =
      known ??
      (key.alg === 'HS256'
        ? checkToken(token, key, nowMs, claimed, tenant.isPlatform)
        : await checkAsymmetricToken(token, key, nowMs, claimed, tenant, this.keystore.issuer(tenant.code)))
    // RFC 7519 4.1.4: the token must not be accepted "on or after" exp.
    if (nowMs / 1000 >= v.exp) {
      if (known) this.verified.delete(token)
      throw new AppError('TOKEN_EXPIRED', 'Token expired')
    }
    if (tenant.status !== 'ACTIVE') throw new AppError('UNAUTHORIZED', 'Tenant is inactive')
    if (!known) this.verified.set(token, v)
    return {
      kind: 'user',
      userId: v.userId,
      sessionId: v.sessionId,
      authTime: v.authTime,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      isPlatform: tenant.isPlatform,
      roles: v.roles,
      permissions: v.permissions,
      claims: v.claims,
    }
  }
}

type Claimed = { tenantId: string; kid: string; alg: VerificationKey['alg'] }
const ALGORITHMS: ReadonlySet<string> = new Set(['HS256', 'EdDSA', 'ES256'])

/** The tenant, kid and algorithm a token claims, before anything is verified; UNAUTHORIZED when malformed. */
function claimedKey(token: string): Claimed {
  const decoded = decodeJwtUnverified(token)
  const tenantId = decoded?.payload.tenantId
  const kid = decoded?.header.kid
  const alg = decoded?.header.alg
  if (!decoded || typeof tenantId !== 'string' || typeof kid !== 'string' || !ALGORITHMS.has(String(alg))) {
    throw invalid()
  }
  return { tenantId, kid, alg: alg as Claimed['alg'] }
}

/** The same key: the same secret, or the same public key. */
function sameKey(a: VerificationKey, b: VerificationKey): boolean {
  if (a.alg === 'HS256') return b.alg === 'HS256' && a.secret.equals(b.secret)
  return b.alg !== 'HS256' && a.alg === b.alg && a.publicKey.equals(b.publicKey)
}

/** Signature, time claims and claim shapes of an HS256 token against the secret its claimed kid names. */
function checkToken(
  token: string,
  key: VerificationKey & { alg: 'HS256' },
  nowMs: number,
  claimed: Claimed,
  isPlatform: boolean,
): Verified {
  const result = verifyJwt(token, () => key.secret, nowMs)
  if (!result.ok) {
    throw result.reason === 'expired' ? new AppError('TOKEN_EXPIRED', 'Token expired') : invalid()
  }
  return verifiedOf(result.payload, key, claimed, isPlatform)
}

/**
 * An EdDSA or ES256 token: the header as for HS256, the signature by `jose` under exactly the key's
 * algorithm, the same time claims, and `iss` equal to the tenant's issuer.
 */
async function checkAsymmetricToken(
  token: string,
  key: VerificationKey & { alg: 'EdDSA' | 'ES256' },
  nowMs: number,
  claimed: Claimed,
  tenant: { isPlatform: boolean },
  issuer: string,
): Promise<Verified> {
  const decoded = decodeJwtUnverified(token)
  if (!decoded || !headerAcceptable(decoded.header)) throw invalid()
  if (!(await verifyAsymmetricSignature(token, key.publicKey, key.alg))) throw invalid()
  const failure = timeClaimsFailure(decoded.payload, nowMs)
  if (failure === 'expired') throw new AppError('TOKEN_EXPIRED', 'Token expired')
  if (failure !== null || decoded.payload.iss !== issuer) throw invalid()
  return verifiedOf(decoded.payload, key, claimed, tenant.isPlatform)
}

/** What a token whose signature and time claims passed says, once its claim shapes are checked. */
function verifiedOf(
  p: Record<string, unknown>,
  key: VerificationKey,
  claimed: Claimed,
  isPlatform: boolean,
): Verified {
  const permissions = strings(p.permissions)
  const roles = strings(p.roles)
  if (typeof p.userId !== 'string' || typeof p.sid !== 'string' || !permissions || !roles) throw invalid()
  return {
    tenantId: claimed.tenantId,
    kid: claimed.kid,
    alg: claimed.alg,
    key,
    exp: p.exp as number,
    userId: p.userId,
    sessionId: p.sid,
    // Why absent rather than refused when malformed: a token without a usable `auth_time` works as before,
    // except on the operations that need a recent sign-in, where absent is refused.
    authTime: Number.isSafeInteger(p.auth_time) ? (p.auth_time as number) : null,
    roles,
    permissions: credentialPermissions(permissions, isPlatform),
    claims: p,
  }
}
