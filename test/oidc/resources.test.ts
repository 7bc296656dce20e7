import t from 'tap'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { call, unchecked } from '../helpers/call.js'
import { createTenant, createUser, userWithToken } from '../helpers/fixtures.js'
import {
  client,
  discover,
  exchangeCode,
  listeningApp,
  registerClient,
  signIn,
  startFlow,
} from '../helpers/oidc.js'

// Resources (contract section 23, RFC 8707) and their JWT access tokens (RFC 9068): set in the tenant's
// `auth_config.oauth`, asked for with `resource`, checked by a standard verifier with the JWKS alone.

const API = 'https://api.acme.test'
const REPORTS = 'http://127.0.0.1:9/reports'
const { app, base } = await listeningApp(t)
const tenant = await createTenant(app, {
  rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null },
  oauth: {
    resources: [
      { indicator: API, name: 'Invoices', scopes: ['invoices:read', 'invoices:write', 'invoices:admin'] },
      { indicator: REPORTS, scopes: ['reports:read'], accessTokenTtl: 120 },
    ],
  },
})
const user = await createUser(app, tenant, { roles: ['user'] })
const issuer = `${base}/t/${tenant.code}`
const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`))
// Why not invoices:admin: a resource's scope reaches only a client that was given it.
const scopes = ['openid', 'email', 'offline_access', 'invoices:read', 'invoices:write', 'reports:read']
const reg = await registerClient(app, tenant, {
  scopes,
  grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
})
const config = await discover(base, tenant, reg.clientId, reg.clientSecret)

/** The OAuth `error` a rejected client call carried, or null when it succeeded. */
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { error?: string }) => e.error ?? String(e),
  )

/** Verifies an RFC 9068 token with the tenant's JWKS alone: its header and claims. */
async function verifyAccessToken(token: string, audience: string) {
  t.equal(decodeProtectedHeader(token).typ, 'at+jwt')
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer,
    audience,
    typ: 'at+jwt',
    algorithms: ['RS256'],
  })
  t.ok(protectedHeader.kid, 'a kid')
  return payload
}

t.test('updateTenantConfig: oauth.resources are checked, and GET config shows them', async (t) => {
  const own = await createTenant(app)
  const { cred } = await userWithToken(app, own, { roles: ['admin'] })
  const ok = await call(app, 'updateTenantConfig', cred, {
    params: { id: own.id },
    body: { oauth: { resources: [{ indicator: API, scopes: ['a:b'] }] } },
  })
  t.equal(ok.status, 200)
  t.same(ok.body.data.oauth, { resources: [{ indicator: API, scopes: ['a:b'] }], dynamicRegistration: false })
  for (const [indicator, problem] of [
    ['http://api.acme.test', 'https'],
    ['https://api.acme.test/#x', 'fragment'],
    ['https://user:pw@api.acme.test', 'credentials'],
  ] as const) {
    const res = await call(app, 'updateTenantConfig', cred, {
      params: { id: own.id },
      body: unchecked({ oauth: { resources: [{ indicator, scopes: [] }] } }),
    })
    t.equal(res.status, 400, indicator)
    t.equal(res.body.code, 'VALIDATION_ERROR')
    t.match(res.body, { details: [{ path: 'body.oauth.resources.0.indicator' }] }, problem)
  }
  const twice = await call(app, 'updateTenantConfig', cred, {
    params: { id: own.id },
    body: {
      oauth: {
        resources: [
          { indicator: API, scopes: [] },
          { indicator: API, scopes: [] },
        ],
      },
    },
  })
  t.equal(twice.status, 400)
  t.match(twice.body, { details: [{ path: 'body.oauth.resources.1.indicator' }] })
  const after = await call(app, 'getMyTenantConfig', cred)
  t.same(after.body.data.oauth.resources, [{ indicator: API, scopes: ['a:b'] }], 'nothing half-written')
})

t.test('exchangeOidcToken: a code flow for a resource answers an RFC 9068 JWT for it', async (t) => {
  const flow = await startFlow(base, config, {
    scope: 'openid email invoices:read invoices:admin',
    resource: API,
  })
  const callback = await signIn(app, flow, user)
  const tokens = await exchangeCode(config, flow, callback, { resource: API })
  const claims = await verifyAccessToken(tokens.access_token, API)
  t.equal(claims.sub, user.id)
  t.equal(claims.client_id, reg.clientId)
  t.equal(claims.scope, 'invoices:read', 'only the resource scopes granted; invoices:admin never given')
  t.ok(claims.jti && claims.iat && claims.exp)
  t.equal(Number(claims.exp) - Number(claims.iat), 900, "the tenant's access-token lifetime")
  t.equal(tokens.claims()?.sub, user.id, 'an ID token beside it')
})

t.test(
  'exchangeOidcToken: a refresh for a resource keeps its JWT form, and the lifetime is the resource own',
  async (t) => {
    const flow = await startFlow(base, config, {
      scope: 'openid offline_access reports:read',
      resource: REPORTS,
    })
    const callback = await signIn(app, flow, user)
    const tokens = await exchangeCode(config, flow, callback, { resource: REPORTS })
    const first = await verifyAccessToken(tokens.access_token, REPORTS)
    t.equal(Number(first.exp) - Number(first.iat), 120, "the resource's accessTokenTtl")
    t.ok(tokens.refresh_token)
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '', {
      resource: REPORTS,
    })
    const again = await verifyAccessToken(refreshed.access_token, REPORTS)
    t.equal(again.scope, 'reports:read')
    const plain = await client.refreshTokenGrant(config, refreshed.refresh_token ?? '')
    t.equal(plain.access_token.split('.').length, 1, 'without resource: an opaque token for userinfo')
    t.equal((await client.fetchUserInfo(config, plain.access_token, user.id)).sub, user.id)
  },
)

t.test('exchangeOidcToken: an unknown resource is invalid_target', async (t) => {
  const unknown = 'https://elsewhere.test/api'
  const res = await fetch(
    client.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:9/cb',
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      resource: unknown,
    }),
    { redirect: 'manual' },
  )
  const location = new URL(res.headers.get('location') ?? '', base)
  t.equal(location.searchParams.get('error'), 'invalid_target', 'at the authorization endpoint')
  t.equal(
    await errorOf(client.clientCredentialsGrant(config, { resource: unknown })),
    'invalid_target',
    'at the token endpoint',
  )
})

t.test(
  'exchangeOidcToken: client credentials for a resource: sub is the client, scopes both lists hold',
  async (t) => {
    const tokens = await client.clientCredentialsGrant(config, {
      resource: API,
      scope: 'invoices:write invoices:admin',
    })
    const claims = await verifyAccessToken(tokens.access_token, API)
    t.equal(claims.sub, reg.clientId)
    t.equal(claims.client_id, reg.clientId)
    t.equal(claims.scope, 'invoices:write', 'invoices:admin was never given to the client')
    t.equal(tokens.scope, 'invoices:write', 'the answer says what was granted')
    const forged = tokens.access_token.slice(0, -4) + (tokens.access_token.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    await t.rejects(jwtVerify(forged, jwks, { issuer, audience: API }), 'a forged signature fails')
    await t.rejects(
      jwtVerify(tokens.access_token, jwks, { issuer, audience: REPORTS }),
      'bound to its audience',
    )
  },
)

t.test('exchangeOidcToken: another tenant knows neither the resource nor the client', async (t) => {
  const other = await createTenant(app, {
    oauth: { resources: [{ indicator: API, scopes: ['invoices:read'] }] },
  })
  const there = await discover(base, other, reg.clientId, reg.clientSecret)
  t.equal(await errorOf(client.clientCredentialsGrant(there, { resource: API })), 'invalid_client')
  const tokens = await client.clientCredentialsGrant(config, { resource: API, scope: 'invoices:read' })
  const otherJwks = createRemoteJWKSet(new URL(`${base}/t/${other.code}/.well-known/jwks.json`))
  await t.rejects(
    jwtVerify(tokens.access_token, otherJwks, { audience: API }),
    "another tenant's keys refuse it",
  )
})

t.test(
  'exchangeOidcToken: a first-party client is granted the resource scopes it asks for, no consent',
  async (t) => {
    const first = await registerClient(app, tenant, { scopes, firstParty: true })
    const firstConfig = await discover(base, tenant, first.clientId, first.clientSecret)
    const flow = await startFlow(base, firstConfig, { scope: 'openid invoices:read', resource: API })
    const callback = await signIn(app, flow, user, false)
    t.ok(callback.searchParams.get('code'), 'no consent page')
    const tokens = await exchangeCode(firstConfig, flow, callback, { resource: API })
    t.equal((await verifyAccessToken(tokens.access_token, API)).scope, 'invoices:read')
  },
)
