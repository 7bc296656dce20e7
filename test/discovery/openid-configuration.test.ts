import t from 'tap'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { call, callRaw, loginTokens } from '../helpers/call.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { issuerOf, payloadOf, signingApp } from '../helpers/signing-keys.js'
import { loadConfig } from '../../src/config.js'

// getOpenIdConfiguration (contract section 13): a tenant's issuer and where its JWKS is, from PUBLIC_URL;
// and what both discovery documents answer for a tenant that is unknown, INACTIVE or malformed.

const { app, tenantWith, jwks, openid } = await signingApp(t)

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
    t.match(res.body, {
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
      // The access tokens' EdDSA key, and the OpenID provider's RSA key its discovery made (section 23).
      t.same(
        keys.body.keys.map((k: { alg: string }) => k.alg),
        ['EdDSA', 'RS256'],
      )
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
    t.match(res.body, {
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
