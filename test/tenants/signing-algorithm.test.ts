import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import type { JWK } from 'jose'
import { call, loginTokens } from '../helpers/call.js'
import {
  DAY,
  DEFAULT_SECRET,
  headerOf,
  issuerOf,
  payloadOf,
  signAs,
  signingApp,
} from '../helpers/signing-keys.js'

// updateTenantConfig's signingAlgorithm (contract section 13): a switch between HS256, EdDSA and ES256
// keeps the key it replaces verifying for 7 days, and no key before that one.

const kit = await signingApp(t)
const { app, clock, claimsOf, switchTo, tenantWith, resign, hsToken, signingKeys, rotate, jwks } = kit
const { kidsOf, accepted, refused } = kit

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
    const { oidc: _rsa, ...state } = await signingKeys(fx)
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
      (await jwks(fx.tenant.code)).body.keys.filter((k: JWK) => k.alg !== 'RS256'),
      [jwkBefore],
      'the JWKS keeps the retired key for its 7 days',
    )

    clock.advance(7 * DAY - 1000)
    await accepted(t, await resign(fx, k1), 'the EdDSA key, 1 s before its 7 days end')
    clock.advance(2000)
    await refused(t, await resign(fx, k1), 'the EdDSA key, 7 days + 1 s after the switch')
    await accepted(t, hsToken(fx, DEFAULT_SECRET, 'default'), 'the HS256 secret')
    t.same(kidsOf(await jwks(fx.tenant.code)), [], 'an HS256 tenant: no access-token key in its set')
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
    body.keys.filter((k: JWK) => k.alg !== 'RS256').map((k: JWK) => [k.kid, k.alg, k.kty, k.crv]),
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
