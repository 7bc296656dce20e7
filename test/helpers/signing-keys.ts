// The signing-key tests share these (contract section 13: offline token verification): an app whose
// PUBLIC_URL names the issuer, on a manual clock; tenants of each algorithm with an admin, their private
// keys opened from the sealed rows so a test can re-sign at a later time; forged tokens; and the calls
// the tests repeat. Where they live: getMe and validateToken in test/authentication/, getSigningKeys,
// rotateSigningKey and updateTenantConfig in test/tenants/, getJwks and getOpenIdConfiguration in
// test/discovery/.
import { createHmac, randomUUID, type KeyObject } from 'node:crypto'
import type { Test } from 'tap'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { buildTestApp, type TestLike } from './app.js'
import { call, type As, type Res } from './call.js'
import { createTenant, createUser, tokenFor, type TenantFx, type UserFx } from './fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { openPrivateKey } from '../../src/security/asymmetric.js'

export const DAY = 24 * 60 * 60 * 1000
export const PUBLIC_URL = 'https://auth.example.test'
/** The service default secret of every test app (test/helpers/app.ts). */
export const DEFAULT_SECRET = 'test-default-jwt-secret-0123456789abcdef'
export const ALGS = ['EdDSA', 'ES256'] as const
export type Alg = (typeof ALGS)[number]
export const OTHER: Record<Alg, Alg> = { EdDSA: 'ES256', ES256: 'EdDSA' }
export const JWK_SHAPE: Record<Alg, { kty: string; crv: string; fields: string[] }> = {
  EdDSA: { kty: 'OKP', crv: 'Ed25519', fields: ['alg', 'crv', 'kid', 'kty', 'use', 'x'] },
  ES256: { kty: 'EC', crv: 'P-256', fields: ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'] },
}

export const issuerOf = (code: string) => `${PUBLIC_URL}/t/${code}`
export const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
export const headerOf = (token: string) => decodeProtectedHeader(token)
export const payloadOf = (token: string) => decodeJwt(token)

/** An HS256 JWS over any header and payload, with any HMAC secret. */
export function hs256(header: object, payload: object, secret: string | Buffer): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/** A compact JWS signed by `jose` with exactly this header. */
export function signAs(
  claims: Record<string, unknown>,
  header: { alg: string; kid?: string; typ?: string },
  key: KeyObject | CryptoKey | Uint8Array,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header).sign(key)
}

/** A private key of a tenant, opened from its sealed row. */
interface StoredKey {
  alg: Alg
  key: KeyObject
}

/** A tenant with an admin (tenants:read and tenants:update) and the private keys seen so far, by kid. */
export interface Fx {
  tenant: TenantFx
  user: UserFx
  admin: () => Promise<As>
  keys: Map<string, StoredKey>
}

/**
 * The test app (PUBLIC_URL set, a manual clock; closed in teardown) and the helpers bound to it: one a
 * file, at its top level.
 */
export async function signingApp(t: TestLike) {
  const clock = createManualClock()
  const app = await buildTestApp(t, { PUBLIC_URL }, { clock })
  const nowS = () => Math.floor(clock.now() / 1000)

  /** The claims a valid token of this user carries now (issueAccessToken), `iss` for an asymmetric tenant. */
  function claimsOf(user: UserFx, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const iat = nowS()
    return {
      sub: user.id,
      userId: user.id,
      tenantId: user.tenant.id,
      tenantCode: user.tenant.code,
      email: user.email,
      username: null,
      roles: ['admin'],
      permissions: ['tenants:read'],
      sid: randomUUID(),
      iat,
      exp: iat + 900,
      jti: randomUUID(),
      iss: issuerOf(user.tenant.code),
      ...extra,
    }
  }

  /** Opens every key pair the tenant has now into `fx.keys` (the tests re-sign with them at later times). */
  async function captureKeys(fx: Fx): Promise<void> {
    const rows = await app.ctx.dbs.main
      .selectFrom('tenant_signing_keys')
      .select(['kid', 'algorithm', 'private_key_enc'])
      .where('tenant_id', '=', fx.tenant.id)
      .where('purpose', '=', 'access')
      .execute()
    for (const r of rows) {
      fx.keys.set(r.kid, {
        // Why the cast: an access-token pair (purpose access) is EdDSA or ES256, never RS256.
        alg: r.algorithm as 'EdDSA' | 'ES256',
        key: openPrivateKey(r.private_key_enc, app.ctx.secretsKey, fx.tenant.id, r.kid),
      })
    }
  }

  /** PATCH /tenants/{id}/config { signingAlgorithm } as the tenant's admin; throws unless 200. */
  async function switchTo(fx: Fx, alg: Alg | 'HS256'): Promise<Res<'updateTenantConfig'>> {
    const res = await call(app, 'updateTenantConfig', await fx.admin(), {
      params: { id: fx.tenant.id },
      body: {
        signingAlgorithm: alg,
      },
    })
    if (res.status !== 200) throw new Error(`switch to ${alg} failed: ${res.raw}`)
    await captureKeys(fx)
    return res
  }

  /** A fresh tenant (HS256, as the fixture writes it) with an admin, switched to `alg` unless HS256. */
  async function tenantWith(alg: Alg | 'HS256'): Promise<Fx> {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['admin'] })
    const fx: Fx = {
      tenant,
      user,
      admin: async () => ({ token: await tokenFor(app, user) }),
      keys: new Map(),
    }
    if (alg !== 'HS256') await switchTo(fx, alg)
    return fx
  }

  /** The token's claims re-signed now (fresh iat and exp) with the stored key its kid names. */
  function resign(fx: Fx, kid: string, token?: string): Promise<string> {
    const stored = fx.keys.get(kid)
    if (!stored) throw new Error(`no stored key ${kid}`)
    const base = token ? payloadOf(token) : claimsOf(fx.user)
    const iat = nowS()
    return signAs(
      { ...base, iat, exp: iat + 900, jti: randomUUID() },
      { alg: stored.alg, kid, typ: 'JWT' },
      stored.key,
    )
  }

  /** An HS256 token of the user signed now with this secret and kid (no iss: HS256 tokens carry none). */
  function hsToken(fx: Fx, secret: string, kid: string): string {
    return hs256({ alg: 'HS256', typ: 'JWT', kid }, claimsOf(fx.user, { iss: undefined }), secret)
  }

  const me = (token: string) => call(app, 'getMe', { token })
  const signingKeys = async (fx: Fx) => (await call(app, 'getSigningKeys', await fx.admin())).data
  const rotate = async (fx: Fx) => {
    const res = await call(app, 'rotateSigningKey', await fx.admin())
    if (res.status !== 200) throw new Error(`rotate failed: ${res.raw}`)
    await captureKeys(fx)
    return res.data
  }
  const jwks = (code: string, headers: Record<string, string> = {}) =>
    call(app, 'getJwks', { headers }, { params: { tenantCode: code } })
  const openid = (code: string, headers: Record<string, string> = {}) =>
    call(app, 'getOpenIdConfiguration', { headers }, { params: { tenantCode: code } })
  // The access tokens' keys of a JWKS (the OpenID provider's RS256 keys beside them are section 23's).
  const kidsOf = (res: Res<'getJwks'>) => res.body.keys.filter((k) => k.alg !== 'RS256').map((k) => k.kid)

  /** getMe takes the token. */
  async function accepted(t: Test, token: string, what: string): Promise<void> {
    const res = await me(token)
    t.equal(res.status, 200, `${what}: accepted`)
  }

  /** getMe refuses the token: 401 with `code`. */
  async function refused(t: Test, token: string, what: string, code = 'UNAUTHORIZED'): Promise<void> {
    const res = await me(token)
    t.equal(res.status, 401, `${what}: refused`)
    t.equal(res.code, code, `${what}: ${code}`)
  }

  const tokens = { app, clock, nowS, claimsOf, switchTo, tenantWith, resign, hsToken, me, accepted, refused }
  const keys = { signingKeys, rotate, jwks, openid, kidsOf }
  return { ...tokens, ...keys }
}
