import t, { type Test } from 'tap'
import { createLocalJWKSet, importJWK, jwtVerify, type JSONWebKeySet, type JWK } from 'jose'
import { loginTokens } from '../helpers/call.js'
import { ALGS, DAY, JWK_SHAPE, signAs, signingApp, type Alg } from '../helpers/signing-keys.js'

// getJwks (contract section 13): a tenant's public keys, current first, while each verifies; cacheable;
// what a standard verifier makes of them.

const kit = await signingApp(t)
const { app, clock, claimsOf, switchTo, tenantWith, signingKeys, rotate, jwks, openid, kidsOf } = kit

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
      // The access tokens' keys; the OpenID provider's RS256 keys beside them are checked in test/oidc/.
      const access = (res.body.keys as JWK[]).filter((k) => k.alg !== 'RS256')
      t.same(
        access.map((k) => [k.kid, k.alg]),
        expected,
        `${what}: current first, then previous`,
      )
      for (const k of access) {
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
  t.equal(stale.body.keys.filter((k) => k.alg !== 'RS256').length, 2)
  t.equal((await jwks(fx.tenant.code, { 'if-none-match': String(stale.headers.etag) })).status, 304)

  const hs = await tenantWith('HS256')
  const empty = await jwks(hs.tenant.code)
  t.equal(empty.headers['cache-control'], 'public, max-age=300')
  t.equal((await jwks(hs.tenant.code, { 'if-none-match': String(empty.headers.etag) })).status, 304)
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
