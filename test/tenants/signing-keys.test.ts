import t from 'tap'
import { createPublicKey } from 'node:crypto'
import { exportJWK, type JWK } from 'jose'
import { call, loginTokens, unchecked } from '../helpers/call.js'
import { createUser, keyCred, tokenFor } from '../helpers/fixtures.js'
import { ALGS, DAY, headerOf, JWK_SHAPE, signingApp } from '../helpers/signing-keys.js'
import { openPrivateKey } from '../../src/security/asymmetric.js'

// getSigningKeys and rotateSigningKey (contract section 13): the key pair of an EdDSA or ES256 tenant
// (the secret of an HS256 one), its rotation with the 7-day overlap of the previous key, and the private
// key sealed at rest. A switch of algorithm is in signing-algorithm.test.ts.

const kit = await signingApp(t)
const { app, clock, switchTo, tenantWith, resign, signingKeys, rotate, jwks, kidsOf, accepted } = kit
const { refused } = kit

for (const alg of ALGS) {
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
}

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
        t.same(kidsOf(await jwks(fx.tenant.code)), [], 'and it leaves the JWKS')
      },
    )
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
    t.same(
      (await jwks(fx.tenant.code)).body.keys,
      [state.publicJwk, state.oidc.publicJwk],
      'the JWKS shows the same key, and the OpenID provider’s RSA key',
    )
    t.match(state.oidc, {
      algorithm: 'RS256',
      publicJwk: { kty: 'RSA', alg: 'RS256', use: 'sig' },
      previous: null,
    })
    clock.advance(60_000)
    const r = await rotate(fx)
    t.equal(r.algorithm, alg)
    t.not(r.kid, state.kid)
    t.equal(r.publicJwk?.kid, r.kid)
    t.not(r.publicJwk?.x, state.publicJwk?.x, 'a new key pair')
    t.same(r.previous, { kid: state.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
    t.not(r.oidc.kid, state.oidc.kid, 'the RSA key rotates with it')
    t.same(r.oidc.previous, { kid: state.oidc.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
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
  t.match(await signingKeys(hs), { kid: 'default', algorithm: 'HS256', publicJwk: null, previous: null })
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
  // Section 23: an HS256 tenant's set holds the OpenID provider's RSA keys only (current, then the former).
  t.same(
    (await jwks(hs.tenant.code)).body.keys,
    [r2.oidc.publicJwk, r1.oidc.publicJwk],
    'no HS256 secret, ever',
  )
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
