import t, { type Test } from 'tap'
import {
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  type KeyObject,
} from 'node:crypto'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
} from 'jose'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { callRaw, call, login, loginTokens, unchecked, type As, type Res } from '../helpers/call.js'
import {
  createTenant,
  createUser,
  keyCred,
  tokenFor,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { loadConfig } from '../../src/config.js'
import { openPrivateKey } from '../../src/security/asymmetric.js'

// Offline token verification (contract section 13): EdDSA and ES256 tenants, their key rotation and
// algorithm switches with the 7-day overlap, forged tokens, and the discovery documents a standard
// verifier reads.

const DAY = 24 * 60 * 60 * 1000
const PUBLIC_URL = 'https://auth.example.test'
// The service default secret of every test app (test/helpers/app.ts).
const DEFAULT_SECRET = 'test-default-jwt-secret-0123456789abcdef'
const ALGS = ['EdDSA', 'ES256'] as const
type Alg = (typeof ALGS)[number]
const OTHER: Record<Alg, Alg> = { EdDSA: 'ES256', ES256: 'EdDSA' }
const JWK_SHAPE: Record<Alg, { kty: string; crv: string; fields: string[] }> = {
  EdDSA: { kty: 'OKP', crv: 'Ed25519', fields: ['alg', 'crv', 'kid', 'kty', 'use', 'x'] },
  ES256: { kty: 'EC', crv: 'P-256', fields: ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'] },
}

const clock = createManualClock()
const app = await buildTestApp(t, { PUBLIC_URL }, { clock })

const issuerOf = (code: string) => `${PUBLIC_URL}/t/${code}`
const nowS = () => Math.floor(clock.now() / 1000)
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
const headerOf = (token: string) => decodeProtectedHeader(token)
const payloadOf = (token: string) => decodeJwt(token)

/** An HS256 JWS over any header and payload, with any HMAC secret. */
function hs256(header: object, payload: object, secret: string | Buffer): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

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

/** A compact JWS signed by `jose` with exactly this header. */
function signAs(
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
interface Fx {
  tenant: TenantFx
  user: UserFx
  admin: () => Promise<As>
  keys: Map<string, StoredKey>
}

/** Opens every key pair the tenant has now into `fx.keys` (the tests re-sign with them at later times). */
async function captureKeys(fx: Fx): Promise<void> {
  const rows = await app.ctx.dbs.main
    .selectFrom('tenant_signing_keys')
    .select(['kid', 'algorithm', 'private_key_enc'])
    .where('tenant_id', '=', fx.tenant.id)
    .execute()
  for (const r of rows) {
    fx.keys.set(r.kid, {
      alg: r.algorithm,
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
  const fx: Fx = { tenant, user, admin: async () => ({ token: await tokenFor(app, user) }), keys: new Map() }
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
const validate = (token: string) => call(app, 'validateToken', { token })
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
const kidsOf = (res: Res<'getJwks'>) => res.body.keys.map((k) => k.kid)

async function accepted(t: Test, token: string, what: string): Promise<void> {
  const res = await me(token)
  t.equal(res.status, 200, `${what}: accepted`)
}

async function refused(t: Test, token: string, what: string, code = 'UNAUTHORIZED'): Promise<void> {
  const res = await me(token)
  t.equal(res.status, 401, `${what}: refused`)
  t.equal(res.code, code, `${what}: ${code}`)
}

for (const alg of ALGS) {
  t.test(
    `getMe, validateToken: an ${alg} tenant's login token carries alg, kid and iss, and verifies`,
    async (t) => {
      const fx = await tenantWith(alg)
      const state = await signingKeys(fx)
      const { accessToken } = await loginTokens(app, fx.user)
      t.same(headerOf(accessToken), { alg, kid: state.kid, typ: 'JWT' })
      const claims = payloadOf(accessToken)
      t.equal(claims.iss, issuerOf(fx.tenant.code))
      t.equal(claims.tenantId, fx.tenant.id)
      t.equal(claims.sub, fx.user.id)
      t.equal((claims.exp ?? 0) - (claims.iat ?? 0), 900)
      const res = await me(accessToken)
      t.equal(res.status, 200)
      t.equal(res.data.id, fx.user.id)
      t.equal((await me(accessToken)).status, 200, 'remembered: accepted again')
      const v = await validate(accessToken)
      t.equal(v.status, 200, 'validateToken accepts it')
      t.equal(v.data?.valid, true)
      t.equal(v.data?.claims?.tenantId, fx.tenant.id)
      await t.test('validateToken shows the token’s iss among its claims', async (t) => {
        t.equal((await validate(accessToken)).data?.claims?.iss, issuerOf(fx.tenant.code))
      })
      t.equal((await me(await tokenFor(app, fx.user))).status, 200, 'a token as tokenFor issues it')
      const upper = await login(app, fx.tenant.code.toUpperCase(), fx.user.email)
      t.equal(upper.status, 200)
      t.equal(
        payloadOf(upper.data.accessToken).iss,
        issuerOf(fx.tenant.code),
        'iss names the stored (lower-case) code',
      )
      await accepted(t, upper.data.accessToken, 'a login with the code in upper case')
      const refreshed = await call(app, 'refresh', {}, { body: { refreshToken: upper.data.refreshToken } })
      t.equal(refreshed.status, 200)
      t.same(
        headerOf(refreshed.data.accessToken),
        { alg, kid: state.kid, typ: 'JWT' },
        'refresh signs the same way',
      )
      t.equal(payloadOf(refreshed.data.accessToken).iss, issuerOf(fx.tenant.code))
      await accepted(t, refreshed.data.accessToken, 'a refreshed token')
    },
  )

  t.test(
    `rotateSigningKey: ${alg} — the previous key verifies for 7 days and not after; a key two rotations back never`,
    async (t) => {
      const fx = await tenantWith(alg)
      const k1 = (await signingKeys(fx)).kid as string
      const t1 = (await loginTokens(app, fx.user)).accessToken
      t.equal(headerOf(t1).kid, k1)

      const r1 = await rotate(fx)
      const k2 = r1.kid as string
      t.not(k2, k1)
      t.same(r1.previous, { kid: k1, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
      await accepted(t, t1, 'a login token of the previous key')
      await accepted(t, await resign(fx, k1), 'the previous key, re-signed now')
      const t2 = (await loginTokens(app, fx.user)).accessToken
      t.equal(headerOf(t2).kid, k2, 'new tokens carry the new kid')
      t.equal(headerOf(t2).alg, alg)
      await accepted(t, t2, 'the current key')

      const r2 = await rotate(fx)
      const k3 = r2.kid as string
      t.same(r2.previous, { kid: k2, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
      await refused(t, await resign(fx, k1), 'two rotations back, inside its 7 days')
      await refused(t, t1, 'two rotations back, a token accepted (and remembered) before')
      await accepted(t, await resign(fx, k2), 'the previous key')
      await accepted(t, await resign(fx, k3), 'the current key')

      clock.advance(7 * DAY - 1000)
      await accepted(t, await resign(fx, k2), 'the previous key, 1 s before its 7 days end')
      clock.advance(2000)
      await refused(t, await resign(fx, k2), 'the previous key, 7 days + 1 s after the rotation')
      await accepted(t, await resign(fx, k3), 'the current key')
      t.equal((await signingKeys(fx)).previous, null, 'no previous once its 7 days are over')
      t.same(kidsOf(await jwks(fx.tenant.code)), [k3], 'nor in the JWKS')
    },
  )

  t.test(
    `getMe: ${alg} — forged tokens are refused: another tenant's key, alg none, HS256 with the public key, unknown kid, wrong or no iss, tampered, expired`,
    async (t) => {
      const a = await tenantWith(alg)
      const b = await tenantWith(alg)
      const kidA = (await signingKeys(a)).kid as string
      const kidB = (await signingKeys(b)).kid as string
      const keyA = a.keys.get(kidA)?.key
      const keyB = b.keys.get(kidB)?.key
      if (!keyA || !keyB) throw new Error('keys not captured')
      const header = (kid: string, al: string = alg) => ({ alg: al, kid, typ: 'JWT' })

      await accepted(
        t,
        await signAs(claimsOf(a.user), header(kidA), keyA),
        'control: A’s claims, A’s key and kid',
      )
      await accepted(t, await signAs(claimsOf(b.user), header(kidB), keyB), 'control: B’s own token')

      await refused(t, await signAs(claimsOf(a.user), header(kidB), keyB), 'A’s claims, B’s key with B’s kid')
      await refused(t, await signAs(claimsOf(a.user), header(kidA), keyB), 'A’s claims, B’s key with A’s kid')
      await refused(
        t,
        await signAs(claimsOf(a.user, { iss: issuerOf(b.tenant.code) }), header(kidB), keyB),
        'A’s claims with B’s issuer, B’s key',
      )

      for (const h of [
        { alg: 'none', kid: kidA, typ: 'JWT' },
        { alg: 'none', typ: 'JWT' },
        { alg: 'NONE', kid: kidA },
      ]) {
        await refused(t, `${b64(h)}.${b64(claimsOf(a.user))}.`, `alg ${h.alg}, kid ${h.kid ?? 'none'}`)
      }
      // Ever so classic: the signature of a real token under `alg: none`.
      const genuine = await signAs(claimsOf(a.user), header(kidA), keyA)
      const [, gp, gs] = genuine.split('.')
      await refused(t, `${b64({ alg: 'none', kid: kidA })}.${gp}.${gs}`, 'alg none with a real signature')

      // Algorithm confusion: the public key (as anyone can fetch it) used as an HMAC secret.
      const jwk = (await jwks(a.tenant.code)).body.keys[0] as Record<string, string>
      t.equal(jwk.kid, kidA)
      const pub = createPublicKey({ key: jwk, format: 'jwk' })
      const secrets: [string, string | Buffer][] = [
        ['x', jwk.x ?? ''],
        ['raw x bytes', Buffer.from(jwk.x ?? '', 'base64url')],
        ['the JWK as JSON', JSON.stringify(jwk)],
        ['the JWKS as JSON', JSON.stringify({ keys: [jwk] })],
        ['the SPKI PEM', pub.export({ type: 'spki', format: 'pem' }).toString()],
        ['the SPKI DER', pub.export({ type: 'spki', format: 'der' })],
      ]
      if (jwk.y) secrets.push(['y', jwk.y])
      for (const [name, secret] of secrets) {
        await refused(
          t,
          hs256(header(kidA, 'HS256'), claimsOf(a.user), secret),
          `HS256 with ${name} as secret`,
        )
        await refused(
          t,
          hs256(header(kidA, 'HS256'), claimsOf(a.user, { iss: undefined }), secret),
          `HS256 with ${name} as secret, no iss`,
        )
      }
      // The other asymmetric algorithm under this tenant's kid, signed with a key of that algorithm.
      const foreign =
        OTHER[alg] === 'EdDSA'
          ? generateKeyPairSync('ed25519')
          : generateKeyPairSync('ec', { namedCurve: 'P-256' })
      await refused(
        t,
        await signAs(claimsOf(a.user), header(kidA, OTHER[alg]), foreign.privateKey),
        `${OTHER[alg]} under the ${alg} kid`,
      )
      // Other JOSE algorithms with the tenant's own key type.
      if (alg === 'ES256') {
        const es384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
        await refused(
          t,
          await signAs(claimsOf(a.user), header(kidA, 'ES384'), es384.privateKey),
          'ES384 under the kid',
        )
        // The right key, but the signature DER-encoded (JWS wants r || s, RFC 7518 3.4).
        const input = `${b64(header(kidA))}.${b64(claimsOf(a.user))}`
        const der = sign('sha256', Buffer.from(input), { key: keyA, dsaEncoding: 'der' }).toString(
          'base64url',
        )
        await refused(t, `${input}.${der}`, 'a DER-encoded ES256 signature')
        const p1363 = sign('sha256', Buffer.from(input), { key: keyA, dsaEncoding: 'ieee-p1363' })
        await accepted(t, `${input}.${p1363.toString('base64url')}`, 'control: the same signature as r || s')
      }

      const attacker = await generateKeyPair(alg, { extractable: true })
      await refused(
        t,
        await signAs(claimsOf(a.user), header('unknown-kid'), attacker.privateKey),
        'an unknown kid',
      )
      await refused(
        t,
        await signAs(claimsOf(a.user), header('unknown-kid'), keyA),
        'A’s key under an unknown kid',
      )
      await refused(
        t,
        await signAs(claimsOf(a.user), header(kidA), attacker.privateKey),
        'an attacker key under A’s kid',
      )
      await refused(t, await signAs(claimsOf(a.user), { alg }, keyA), 'A’s key, no kid')
      await refused(
        t,
        await signAs(claimsOf(a.user), header('default'), keyA),
        'A’s key under the default kid',
      )
      await refused(t, await signAs(claimsOf(a.user), header(''), keyA), 'A’s key under an empty kid')
      // An attacker's JWK embedded in the header (RFC 7515 jwk) must not be trusted.
      await refused(
        t,
        await new SignJWT(claimsOf(a.user))
          .setProtectedHeader({ alg, kid: kidA, jwk: await exportJWK(attacker.publicKey) })
          .sign(attacker.privateKey),
        'an embedded jwk header',
      )

      for (const [what, iss] of [
        ['no iss', undefined],
        ['another host', `https://evil.example/t/${a.tenant.code}`],
        ['B’s issuer', issuerOf(b.tenant.code)],
        ['the code in upper case', issuerOf(a.tenant.code.toUpperCase())],
        ['a trailing slash', `${issuerOf(a.tenant.code)}/`],
        ['http instead of https', issuerOf(a.tenant.code).replace('https:', 'http:')],
        ['the bare PUBLIC_URL', PUBLIC_URL],
        ['a number', 42],
        ['an array', [issuerOf(a.tenant.code)]],
      ] as const) {
        await refused(t, await signAs(claimsOf(a.user, { iss }), header(kidA), keyA), `iss: ${what}`)
      }

      const [h, p, s] = genuine.split('.')
      const claims = payloadOf(genuine)
      for (const [what, patch] of [
        ['permissions', { permissions: ['admin:*'] }],
        ['roles', { roles: ['super_admin'] }],
        ['exp', { exp: (claims.exp ?? 0) + 3600 }],
        ['tenantId', { tenantId: b.tenant.id }],
      ] as const) {
        await refused(t, `${h}.${b64({ ...claims, ...patch })}.${s}`, `tampered ${what}`)
      }
      const flipped = `${s?.slice(0, -2)}${s?.endsWith('AA') ? 'BA' : 'AA'}`
      await refused(t, `${h}.${p}.${flipped}`, 'a changed signature')
      await refused(t, `${h}.${p}.`, 'no signature')

      const expired = await signAs(
        claimsOf(a.user, { iat: nowS() - 1000, exp: nowS() - 100 }),
        header(kidA),
        keyA,
      )
      const res = await me(expired)
      t.equal(res.status, 401)
      t.same(res.body, { success: false, error: 'Token expired', code: 'TOKEN_EXPIRED' })
      const atExp = await signAs(claimsOf(a.user, { iat: nowS() - 900, exp: nowS() }), header(kidA), keyA)
      await refused(t, atExp, 'on exp (RFC 7519: not on or after)', 'TOKEN_EXPIRED')
      const login = (await loginTokens(app, a.user)).accessToken
      await accepted(t, login, 'a login token')
      clock.advance(900_000)
      await refused(t, login, 'the same login token 900 s later (remembered path)', 'TOKEN_EXPIRED')
      await refused(
        t,
        await signAs(claimsOf(b.user, { iat: nowS() - 1000, exp: nowS() - 100 }), header(kidB), keyA),
        'an expired forgery is a bad signature, not expired',
      )
      await refused(
        t,
        await signAs(claimsOf(a.user, { iat: nowS(), exp: nowS() + 2 * 86_400 }), header(kidA), keyA),
        'a lifetime over a day',
      )
      await refused(
        t,
        await signAs(claimsOf(a.user, { iat: nowS() + 3600, exp: nowS() + 4000 }), header(kidA), keyA),
        'iat an hour ahead',
      )
      await refused(
        t,
        await signAs(claimsOf(a.user, { nbf: nowS() + 3600 }), header(kidA), keyA),
        'nbf an hour ahead',
      )
      await refused(t, await signAs(claimsOf(a.user, { exp: undefined }), header(kidA), keyA), 'no exp')
      await refused(
        t,
        await signAs(claimsOf(a.user), header(kidA, alg), keyA).then((x) => `${x}.`),
        'four parts',
      )
      await refused(
        t,
        await new SignJWT(claimsOf(a.user)).setProtectedHeader({ alg, kid: kidA, typ: 'at+jwt' }).sign(keyA),
        'typ other than JWT',
      )
    },
  )
}

t.test('getMe: an HS256 tenant refuses EdDSA and ES256 tokens, whatever the kid', async (t) => {
  const fx = await tenantWith('HS256')
  const { privateKey } = await generateKeyPair('EdDSA')
  const es = await generateKeyPair('ES256')
  await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'control: HS256 under the default kid')
  await refused(
    t,
    await signAs(claimsOf(fx.user), { alg: 'EdDSA', kid: 'default', typ: 'JWT' }, privateKey),
    'EdDSA, kid default',
  )
  await refused(
    t,
    await signAs(claimsOf(fx.user), { alg: 'ES256', kid: 'default', typ: 'JWT' }, es.privateKey),
    'ES256, kid default',
  )
  // The tenant's own secret, made current by a rotation.
  const rotated = await rotate(fx)
  t.equal(rotated.algorithm, 'HS256')
  const kid = rotated.kid as string
  const secret = (await call(app, 'getJwtSecret', await fx.admin())).data.secret as string
  await accepted(t, hsToken(fx, secret, kid), 'control: HS256 under the secret’s kid')
  await refused(
    t,
    await signAs(claimsOf(fx.user), { alg: 'EdDSA', kid, typ: 'JWT' }, privateKey),
    'EdDSA, the secret’s kid',
  )
  await refused(
    t,
    await signAs(claimsOf(fx.user), { alg: 'ES256', kid, typ: 'JWT' }, es.privateKey),
    'ES256, the secret’s kid',
  )
  await refused(
    t,
    hs256({ alg: 'EdDSA', kid, typ: 'JWT' }, claimsOf(fx.user), secret),
    'an HMAC of the secret under alg EdDSA',
  )
  await refused(
    t,
    hs256({ alg: 'HS384', kid, typ: 'JWT' }, claimsOf(fx.user), secret),
    'HS384 with the secret',
  )
})

t.test(
  'updateTenantConfig: HS256 → EdDSA keeps the HS256 secret 7 days, older secrets not at all',
  async (t) => {
    const fx = await tenantWith('HS256')
    // Rotating an HS256 tenant's signing key rotates its secret: the default kid is now the previous one.
    const rotated = await rotate(fx)
    t.same(rotated.previous, { kid: 'default', expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
    const s1 = rotated.kid as string
    const secret = (await call(app, 'getJwtSecret', await fx.admin())).data.secret as string
    const before = (await loginTokens(app, fx.user)).accessToken
    t.same(headerOf(before), { alg: 'HS256', typ: 'JWT', kid: s1 })
    t.equal(payloadOf(before).iss, undefined, 'HS256 tokens carry no iss')
    await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the default secret, before the switch')

    const res = await switchTo(fx, 'EdDSA')
    t.equal(res.data.signingAlgorithm, 'EdDSA')
    const state = await signingKeys(fx)
    t.equal(state.algorithm, 'EdDSA')
    t.same(state.previous, { kid: s1, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
    const after = (await loginTokens(app, fx.user)).accessToken
    t.same(headerOf(after), { alg: 'EdDSA', kid: state.kid, typ: 'JWT' })
    t.equal(payloadOf(after).iss, issuerOf(fx.tenant.code))
    await accepted(t, after, 'a new EdDSA token')
    await accepted(t, before, 'an HS256 token issued before the switch')
    await accepted(t, hsToken(fx, secret, s1), 'the HS256 secret, re-signed now')
    await refused(
      t,
      hsToken(fx, DEFAULT_SECRET, 'default'),
      'the secret before that one: ended by the switch',
    )
    t.same(kidsOf(await jwks(fx.tenant.code)), [state.kid], 'the JWKS shows the key pair only')

    clock.advance(7 * DAY - 1000)
    await accepted(t, hsToken(fx, secret, s1), 'the HS256 secret, 1 s before its 7 days end')
    clock.advance(2000)
    await refused(t, hsToken(fx, secret, s1), 'the HS256 secret, 7 days + 1 s after the switch')
    await accepted(t, await resign(fx, state.kid as string), 'the EdDSA key')
    t.equal((await signingKeys(fx)).previous, null)
  },
)

t.test('updateTenantConfig: a rotation after HS256 → EdDSA ends the HS256 secret at once', async (t) => {
  const fx = await tenantWith('EdDSA')
  await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the former (default) secret, after the switch')
  const r = await rotate(fx)
  t.not(r.previous?.kid, 'default')
  await refused(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the former secret, after a rotation')
})

t.test(
  'updateTenantConfig: EdDSA → HS256 keeps EdDSA tokens 7 days; new tokens are HS256 again',
  async (t) => {
    const fx = await tenantWith('EdDSA')
    const k1 = (await signingKeys(fx)).kid as string
    const edToken = (await loginTokens(app, fx.user)).accessToken
    t.equal(headerOf(edToken).alg, 'EdDSA')
    const jwkBefore = (await jwks(fx.tenant.code)).body.keys[0]

    const res = await switchTo(fx, 'HS256')
    t.equal(res.data.signingAlgorithm, 'HS256')
    const state = await signingKeys(fx)
    t.same(state, {
      kid: 'default',
      algorithm: 'HS256',
      publicJwk: null,
      previous: { kid: k1, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() },
    })
    const hs = (await loginTokens(app, fx.user)).accessToken
    t.same(headerOf(hs), { alg: 'HS256', typ: 'JWT', kid: 'default' })
    t.equal(payloadOf(hs).iss, undefined, 'no iss on HS256 tokens')
    await accepted(t, hs, 'a new HS256 token')
    await accepted(t, edToken, 'an EdDSA token issued before the switch')
    await accepted(t, await resign(fx, k1), 'the EdDSA key, re-signed now')
    // The retired key stays published while it verifies, so offline verifiers accept what /me accepts.
    t.same(
      (await jwks(fx.tenant.code)).body.keys,
      [jwkBefore],
      'the JWKS keeps the retired key for its 7 days',
    )

    clock.advance(7 * DAY - 1000)
    await accepted(t, await resign(fx, k1), 'the EdDSA key, 1 s before its 7 days end')
    clock.advance(2000)
    await refused(t, await resign(fx, k1), 'the EdDSA key, 7 days + 1 s after the switch')
    await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the HS256 secret')
    t.same((await jwks(fx.tenant.code)).body, { keys: [] }, 'an HS256 tenant: an empty key set')
    t.equal((await signingKeys(fx)).previous, null)
  },
)

t.test('updateTenantConfig: EdDSA → ES256 keeps the EdDSA key as previous, for 7 days', async (t) => {
  const fx = await tenantWith('EdDSA')
  const k1 = (await signingKeys(fx)).kid as string
  const edToken = (await loginTokens(app, fx.user)).accessToken
  await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the HS256 secret the first switch kept')
  const same = await switchTo(fx, 'EdDSA')
  t.equal(same.data.signingAlgorithm, 'EdDSA')
  t.equal((await signingKeys(fx)).kid, k1, 'setting the same algorithm again changes no key')
  await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'nor the secret kept')

  await switchTo(fx, 'ES256')
  const state = await signingKeys(fx)
  t.equal(state.algorithm, 'ES256')
  t.not(state.kid, k1)
  t.equal(state.publicJwk?.kty, 'EC')
  t.same(state.previous, { kid: k1, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
  const es = (await loginTokens(app, fx.user)).accessToken
  t.same(headerOf(es), { alg: 'ES256', kid: state.kid, typ: 'JWT' })
  await accepted(t, es, 'a new ES256 token')
  await accepted(t, edToken, 'an EdDSA token issued before the switch')
  await refused(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the HS256 secret: two keys back now')
  const body = (await jwks(fx.tenant.code)).body
  t.same(
    body.keys.map((k: JWK) => [k.kid, k.alg, k.kty, k.crv]),
    [
      [state.kid, 'ES256', 'EC', 'P-256'],
      [k1, 'EdDSA', 'OKP', 'Ed25519'],
    ],
  )
  await refused(
    t,
    await signAs(
      claimsOf(fx.user),
      { alg: 'ES256', kid: k1, typ: 'JWT' },
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    ),
    'ES256 under the EdDSA kid',
  )

  clock.advance(7 * DAY + 1000)
  await refused(t, await resign(fx, k1), 'the EdDSA key, 7 days + 1 s after the switch')
  await accepted(t, await resign(fx, state.kid as string), 'the ES256 key')
  t.same(kidsOf(await jwks(fx.tenant.code)), [state.kid])
})

t.test(
  'rotateSigningKey: rotating an HS256 tenant ends a key pair retired by a switch back from EdDSA',
  async (t) => {
    const fx = await tenantWith('EdDSA')
    const k1 = (await signingKeys(fx)).kid as string
    await switchTo(fx, 'HS256')
    clock.advance(60 * 60 * 1000)
    await accepted(t, await resign(fx, k1), 'the retired EdDSA key, inside its 7 days')
    const r = await rotate(fx)
    t.same(r.previous, { kid: 'default', expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
    await t.test(
      'only the replaced secret keeps verifying: the key pair before it ends at once',
      async (t) => {
        await refused(t, await resign(fx, k1), 'the key pair two keys back')
        t.same((await jwks(fx.tenant.code)).body, { keys: [] }, 'and it leaves the JWKS')
      },
    )
  },
)

t.test(
  'getJwks: the keys after each rotation and switch, current first; never a private field',
  async (t) => {
    const fx = await tenantWith('HS256')
    const empty = await jwks(fx.tenant.code)
    t.equal(empty.status, 200)
    t.same(empty.body, { keys: [] }, 'an HS256 tenant has an empty key set')
    const shown: string[][] = []
    const check = async (t: Test, expected: [string, Alg][], what: string) => {
      const res = await jwks(fx.tenant.code)
      t.equal(res.status, 200, what)
      t.notMatch(res.raw, /"(d|p|q|dp|dq|qi|k)"\s*:/, `${what}: no private or symmetric field`)
      t.same(
        (res.body.keys as JWK[]).map((k) => [k.kid, k.alg]),
        expected,
        `${what}: current first, then previous`,
      )
      for (const k of res.body.keys as JWK[]) {
        const shape = JWK_SHAPE[k.alg as Alg]
        t.same(Object.keys(k).sort(), shape.fields, `${what}: ${k.kid} fields`)
        t.equal(k.kty, shape.kty)
        t.equal(k.crv, shape.crv)
        t.equal(k.use, 'sig')
        // Each key verifies what the stored private key of its kid signs.
        const stored = fx.keys.get(k.kid ?? '')
        if (!stored) throw new Error(`no stored key ${k.kid}`)
        const jwsed = await signAs({ probe: 1 }, { alg: stored.alg }, stored.key)
        const { payload } = await jwtVerify(jwsed, await importJWK(k, k.alg), {
          currentDate: new Date(clock.now()),
        })
        t.equal(payload.probe, 1, `${what}: ${k.kid} is the public half of its stored key`)
      }
      shown.push(kidsOf(res))
    }
    const current = async () => (await signingKeys(fx)).kid as string
    await switchTo(fx, 'EdDSA')
    const k1 = await current()
    await check(t, [[k1, 'EdDSA']], 'after HS256 → EdDSA (the secret is not a published key)')
    await rotate(fx)
    const k2 = await current()
    await check(
      t,
      [
        [k2, 'EdDSA'],
        [k1, 'EdDSA'],
      ],
      'after a rotation',
    )
    await rotate(fx)
    const k3 = await current()
    await check(
      t,
      [
        [k3, 'EdDSA'],
        [k2, 'EdDSA'],
      ],
      'after a second rotation',
    )
    await switchTo(fx, 'ES256')
    const e1 = await current()
    await check(
      t,
      [
        [e1, 'ES256'],
        [k3, 'EdDSA'],
      ],
      'after EdDSA → ES256',
    )
    await rotate(fx)
    const e2 = await current()
    await check(
      t,
      [
        [e2, 'ES256'],
        [e1, 'ES256'],
      ],
      'after an ES256 rotation',
    )
    await switchTo(fx, 'HS256')
    await check(t, [[e2, 'ES256']], 'after ES256 → HS256: the retired pair while it verifies')
    clock.advance(7 * DAY + 1000)
    await check(t, [], 'HS256, 7 days later')
    t.equal(new Set(shown.flat()).size, 5, 'every key pair has its own kid')
    const state = await signingKeys(fx)
    t.notMatch(JSON.stringify(state), /"d"\s*:/, 'getSigningKeys shows no private field either')
  },
)

t.test('getJwks: Cache-Control, ETag and 304; a rotation changes the ETag', async (t) => {
  const fx = await tenantWith('EdDSA')
  const first = await jwks(fx.tenant.code)
  t.equal(first.status, 200)
  t.equal(first.headers['cache-control'], 'public, max-age=300')
  t.match(first.headers['content-type'], /^application\/json/)
  const etag = String(first.headers.etag)
  t.match(etag, /^"[^"]+"$/, 'a strong validator')
  const again = await jwks(fx.tenant.code)
  t.equal(again.headers.etag, etag, 'the same body, the same ETag')

  for (const given of [etag, `W/${etag}`, `"stale", ${etag}`]) {
    const res = await jwks(fx.tenant.code, { 'if-none-match': given })
    t.equal(res.status, 304, `If-None-Match: ${given}`)
    t.equal(res.raw, '', 'no body')
    t.equal(res.headers.etag, etag)
  }
  const other = await jwks(fx.tenant.code, { 'if-none-match': '"something-else"' })
  t.equal(other.status, 200, 'a validator that does not match: the document')

  await rotate(fx)
  const stale = await jwks(fx.tenant.code, { 'if-none-match': etag })
  t.equal(stale.status, 200, 'a stale validator after a rotation: 200')
  t.not(stale.headers.etag, etag, 'with a new ETag')
  t.equal(stale.body.keys.length, 2)
  t.equal((await jwks(fx.tenant.code, { 'if-none-match': String(stale.headers.etag) })).status, 304)

  const hs = await tenantWith('HS256')
  const empty = await jwks(hs.tenant.code)
  t.equal(empty.headers['cache-control'], 'public, max-age=300')
  t.equal((await jwks(hs.tenant.code, { 'if-none-match': String(empty.headers.etag) })).status, 304)
})

t.test(
  'getJwks, getOpenIdConfiguration: 404 TENANT_NOT_FOUND for an unknown or INACTIVE tenant; the code is case-insensitive; 400 for a malformed one',
  async (t) => {
    const fx = await tenantWith('EdDSA')
    for (const get of [jwks, openid]) {
      const unknown = await get('no-such-tenant')
      t.equal(unknown.status, 404)
      t.equal(unknown.body.success, false)
      t.equal(unknown.code, 'TENANT_NOT_FOUND')
      t.same(Object.keys(unknown.body).sort(), ['code', 'error', 'success'], 'the envelope')
      for (const bad of ['bad_code', 'x'.repeat(65), 'a%20b']) {
        const res = await get(bad)
        t.equal(res.status, 400, `malformed: ${bad}`)
        t.equal(res.code, 'VALIDATION_ERROR')
      }
      const lower = await get(fx.tenant.code)
      const upper = await get(fx.tenant.code.toUpperCase())
      t.equal(upper.status, 200, 'the code in upper case')
      t.same(upper.body, lower.body, 'the same document')
    }
    const off = await call(
      app,
      'updateTenant',
      { key: PLATFORM_KEY },
      { params: { id: fx.tenant.id }, body: { status: 'INACTIVE' } },
    )
    t.equal(off.status, 200)
    for (const get of [jwks, openid]) {
      const res = await get(fx.tenant.code)
      t.equal(res.status, 404, 'INACTIVE')
      t.equal(res.code, 'TENANT_NOT_FOUND')
      t.equal(res.body.success, false)
    }
    const on = await call(
      app,
      'updateTenant',
      { key: PLATFORM_KEY },
      { params: { id: fx.tenant.id }, body: { status: 'ACTIVE' } },
    )
    t.equal(on.status, 200)
    t.equal((await jwks(fx.tenant.code)).status, 200, 'ACTIVE again')
  },
)

t.test('getOpenIdConfiguration: issuer and jwks_uri from PUBLIC_URL, cacheable, 304', async (t) => {
  for (const alg of ['EdDSA', 'HS256'] as const) {
    const fx = await tenantWith(alg)
    const res = await openid(fx.tenant.code.toUpperCase())
    t.equal(res.status, 200)
    t.same(res.body, {
      issuer: issuerOf(fx.tenant.code),
      jwks_uri: `${issuerOf(fx.tenant.code)}/.well-known/jwks.json`,
    })
    t.equal(res.headers['cache-control'], 'public, max-age=300')
    const etag = String(res.headers.etag)
    t.match(etag, /^"[^"]+"$/)
    const cached = await openid(fx.tenant.code, { 'if-none-match': etag })
    t.equal(cached.status, 304)
    t.equal(cached.raw, '')
    if (alg === 'EdDSA') {
      const token = (await loginTokens(app, fx.user)).accessToken
      t.equal(payloadOf(token).iss, res.body.issuer, 'the issuer is the iss of the tenant’s tokens')
      const keys = await callRaw(app, 'GET', new URL(res.body.jwks_uri as string).pathname)
      t.equal(keys.status, 200, 'jwks_uri names the JWKS route')
      t.equal(keys.body.keys.length, 1)
    }
  }
})

t.test('getOpenIdConfiguration: a trailing slash in PUBLIC_URL is dropped', async (t) => {
  for (const [given, base] of [
    ['https://auth.example.test/', 'https://auth.example.test'],
    ['https://auth.example.test/base//', 'https://auth.example.test/base'],
  ] as const) {
    const other = await buildTestApp(t, { PUBLIC_URL: given })
    const tenant = await createTenant(other)
    const res = await call(other, 'getOpenIdConfiguration', null, { params: { tenantCode: tenant.code } })
    t.same(res.body, {
      issuer: `${base}/t/${tenant.code}`,
      jwks_uri: `${base}/t/${tenant.code}/.well-known/jwks.json`,
    })
    const user = await createUser(other, tenant, { roles: ['admin'] })
    const sw = await call(
      other,
      'updateTenantConfig',
      { token: await tokenFor(other, user) },
      {
        params: { id: tenant.id },
        body: {
          signingAlgorithm: 'ES256',
        },
      },
    )
    t.equal(sw.status, 200)
    t.equal(payloadOf(await tokenFor(other, user)).iss, `${base}/t/${tenant.code}`, 'the tokens’ iss too')
  }
})

t.test(
  'getOpenIdConfiguration: loadConfig validates PUBLIC_URL and defaults it to http://HOST:PORT',
  async (t) => {
    for (const bad of [
      'ftp://x',
      'https://a/b?c',
      'https://a/b?',
      'https://a/b#f',
      'https://user:pw@a.test',
      'not a url',
      'https://',
      'mailto:a@b.test',
    ]) {
      t.throws(() => loadConfig({ PUBLIC_URL: bad }), { message: /PUBLIC_URL/ }, `refused: ${bad}`)
    }
    t.equal(loadConfig({}).publicUrl, 'http://127.0.0.1:3000', 'default')
    t.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).publicUrl, 'http://0.0.0.0:8080')
    t.equal(
      loadConfig({ HOST: '::1', PORT: '4000' }).publicUrl,
      'http://[::1]:4000',
      'an IPv6 host in brackets',
    )
    t.equal(loadConfig({ PUBLIC_URL: 'https://id.example.test/' }).publicUrl, 'https://id.example.test')
    t.equal(loadConfig({ PUBLIC_URL: 'http://localhost:8080/auth' }).publicUrl, 'http://localhost:8080/auth')
    t.equal(loadConfig({ PUBLIC_URL: '  https://id.example.test  ' }).publicUrl, 'https://id.example.test')
  },
)

t.test('getSigningKeys, rotateSigningKey: 200 shapes for EdDSA, ES256 and HS256 tenants', async (t) => {
  for (const alg of ALGS) {
    const fx = await tenantWith(alg)
    const state = await signingKeys(fx)
    t.equal(state.algorithm, alg)
    t.match(state.kid, /^[A-Za-z0-9_-]+$/)
    t.same(Object.keys(state.publicJwk ?? {}).sort(), JWK_SHAPE[alg].fields)
    t.match(state.publicJwk, {
      kid: state.kid,
      alg,
      use: 'sig',
      kty: JWK_SHAPE[alg].kty,
      crv: JWK_SHAPE[alg].crv,
    })
    t.same(
      state.previous,
      { kid: 'default', expiresAt: new Date(clock.now() + 7 * DAY).toISOString() },
      'the secret the switch replaced',
    )
    t.same((await jwks(fx.tenant.code)).body.keys, [state.publicJwk], 'the JWKS shows the same key')
    clock.advance(60_000)
    const r = await rotate(fx)
    t.equal(r.algorithm, alg)
    t.not(r.kid, state.kid)
    t.equal(r.publicJwk?.kid, r.kid)
    t.not(r.publicJwk?.x, state.publicJwk?.x, 'a new key pair')
    t.same(r.previous, { kid: state.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
    t.same(await signingKeys(fx), r, 'GET shows what the rotation answered')
    const withBody = await call(app, 'rotateSigningKey', await fx.admin(), { body: {} })
    t.equal(withBody.status, 200, 'an empty JSON object is no input')
    const extra = await call(app, 'rotateSigningKey', await fx.admin(), {
      body: unchecked({
        algorithm: 'HS256',
      }),
    })
    t.equal(extra.status, 400)
    t.equal(extra.code, 'VALIDATION_ERROR')
  }

  const hs = await tenantWith('HS256')
  t.same(await signingKeys(hs), { kid: 'default', algorithm: 'HS256', publicJwk: null, previous: null })
  const r1 = await rotate(hs)
  t.equal(r1.algorithm, 'HS256')
  t.equal(r1.publicJwk, null)
  t.not(r1.kid, 'default')
  t.same(r1.previous, { kid: 'default', expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
  const secretState = (await call(app, 'getJwtSecret', await hs.admin())).data
  t.equal(secretState.kid, r1.kid, 'the secret was rotated')
  t.equal(secretState.configured, true)
  t.equal(headerOf(await tokenFor(app, hs.user)).kid, r1.kid, 'new tokens carry its kid')
  const r2 = await rotate(hs)
  t.same(
    r2.previous,
    { kid: r1.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() },
    'previous = the former kid',
  )
  t.same((await jwks(hs.tenant.code)).body, { keys: [] })
})

t.test('getSigningKeys, rotateSigningKey: FORBIDDEN without the permission; a JWT only', async (t) => {
  const fx = await tenantWith('EdDSA')
  const plain = await createUser(app, fx.tenant, { roles: ['user'] })
  const reader = await createUser(app, fx.tenant, { roles: ['user'], permissions: ['tenants:read'] })
  const asPlain = { token: await tokenFor(app, plain) }
  const asReader = { token: await tokenFor(app, reader) }
  const before = await signingKeys(fx)
  for (const op of ['getSigningKeys', 'rotateSigningKey'] as const) {
    const res = await call(app, op, asPlain)
    t.equal(res.status, 403, `${op} without tenants:*`)
    t.equal(res.code, 'FORBIDDEN')
  }
  t.equal((await call(app, 'getSigningKeys', asReader)).status, 200, 'tenants:read reads')
  const denied = await call(app, 'rotateSigningKey', asReader)
  t.equal(denied.status, 403, 'tenants:read does not rotate')
  t.equal(denied.code, 'FORBIDDEN')
  const key = await keyCred(app, fx.tenant, ['tenants:read', 'tenants:update'])
  t.equal((await call(app, 'getSigningKeys', key)).status, 401, 'a Client Key: JWT only')
  t.equal((await call(app, 'rotateSigningKey', key)).status, 401)
  t.same(await signingKeys(fx), before, 'nothing rotated')
})

t.test('rotateSigningKey: the private key is sealed at rest, bound to its tenant and kid', async (t) => {
  for (const alg of ALGS) {
    const fx = await tenantWith(alg)
    const other = await tenantWith(alg)
    const r = await rotate(fx)
    const row = await app.ctx.dbs.main
      .selectFrom('tenant_signing_keys')
      .select(['private_key_enc', 'public_jwk', 'algorithm'])
      .where('kid', '=', r.kid as string)
      .executeTakeFirstOrThrow()
    t.equal(row.algorithm, alg)
    t.notMatch(row.private_key_enc, /-----BEGIN|PRIVATE KEY|MC4CAQ|MIGHAgEA/, 'no PEM or DER in the clear')
    t.notMatch(JSON.stringify(row.public_jwk), /"d"/, 'the stored public JWK has no private part')
    const opened = openPrivateKey(row.private_key_enc, app.ctx.secretsKey, fx.tenant.id, r.kid as string)
    const publicHalf = await exportJWK(createPublicKey(opened))
    t.equal(publicHalf.x, r.publicJwk?.x, 'it opens to the private half of the published key')
    t.throws(
      () => openPrivateKey(row.private_key_enc, app.ctx.secretsKey, other.tenant.id, r.kid as string),
      'bound to its tenant',
    )
    t.throws(
      () => openPrivateKey(row.private_key_enc, app.ctx.secretsKey, fx.tenant.id, 'another-kid'),
      'bound to its kid',
    )
    const jwksRes = await jwks(fx.tenant.code)
    for (const k of jwksRes.body.keys as JWK[]) t.equal(k.d, undefined, `no d in ${k.kid}`)
    t.notMatch(jwksRes.raw, /"d"/)
  }
})

t.test(
  'getJwks: a standard verifier (jose createLocalJWKSet + jwtVerify) accepts our tokens and refuses another tenant’s',
  async (t) => {
    for (const alg of ALGS) {
      const a = await tenantWith(alg)
      const b = await tenantWith(alg)
      const { issuer } = (await openid(a.tenant.code)).body as { issuer: string }
      const keySet = async () => createLocalJWKSet((await jwks(a.tenant.code)).body as JSONWebKeySet)
      const verify = async (token: string) =>
        jwtVerify(token, await keySet(), { issuer, algorithms: [alg], currentDate: new Date(clock.now()) })

      const tokenA = (await loginTokens(app, a.user)).accessToken
      const { payload, protectedHeader } = await verify(tokenA)
      t.equal(payload.sub, a.user.id, `${alg}: a fresh token verifies`)
      t.equal(protectedHeader.alg, alg)
      const tokenB = (await loginTokens(app, b.user)).accessToken
      await t.rejects(verify(tokenB), { code: 'ERR_JWKS_NO_MATCHING_KEY' }, `${alg}: another tenant’s token`)
      const keyB = b.keys.get((await signingKeys(b)).kid as string)?.key
      if (!keyB) throw new Error('B’s key not captured')
      const bSigned = await signAs(claimsOf(a.user), { alg, kid: (await signingKeys(a)).kid as string }, keyB)
      await t.rejects(
        verify(bSigned),
        { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' },
        `${alg}: another tenant’s key under A’s kid`,
      )
      const bSet = createLocalJWKSet((await jwks(b.tenant.code)).body as JSONWebKeySet)
      await t.rejects(
        jwtVerify(tokenB, bSet, { issuer, currentDate: new Date(clock.now()) }),
        { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' },
        `${alg}: B’s token is not from A’s issuer`,
      )
      await rotate(a)
      t.equal((await verify(tokenA)).payload.sub, a.user.id, `${alg}: still verifies after a rotation`)
      t.equal(
        (await verify((await loginTokens(app, a.user)).accessToken)).payload.sub,
        a.user.id,
        `${alg}: a token of the new key`,
      )
    }
  },
)
