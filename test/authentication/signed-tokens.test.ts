import t from 'tap'
import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { call, login, loginTokens, refresh } from '../helpers/call.js'
import { tokenFor } from '../helpers/fixtures.js'
import {
  ALGS,
  b64,
  DEFAULT_SECRET,
  headerOf,
  hs256,
  issuerOf,
  OTHER,
  payloadOf,
  PUBLIC_URL,
  signAs,
  signingApp,
} from '../helpers/signing-keys.js'

// Offline token verification (contract section 13), as getMe and validateToken see it: the tokens of
// EdDSA and ES256 tenants verify; forged ones are refused. The keys' rotation and the algorithm switches
// are in test/tenants/signing-keys.test.ts and signing-algorithm.test.ts, the discovery documents in
// test/discovery/.

const kit = await signingApp(t)
const { app, clock, nowS, claimsOf, tenantWith, hsToken, me, signingKeys, rotate, jwks, accepted } = kit
const { refused } = kit
const validate = (token: string) => call(app, 'validateToken', { token })

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
      const refreshed = await refresh(app, upper.data.refreshToken)
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
