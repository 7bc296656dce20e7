import { randomUUID } from 'node:crypto'
import t from 'tap'
import * as o from 'oauth4webapi'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { listeningApp, openAuthorization, registerClient, signIn } from '../helpers/oidc.js'
import type { BodyOf } from '../helpers/call.js'

// Contract section 23: strict standard clients work against the provider with no code of ours. This file is
// the judge for oauth4webapi 3: every protocol step goes through its own request and process calls, with
// their strict checks (RFC 9207 `iss`, PKCE, the ID token's claims, nonce and signature, RFC 9068 access
// tokens). Only the browser is ours (fetch with a cookie jar, test/helpers/oidc.ts). The test server is http
// on loopback, so every request carries `allowInsecureRequests`; nothing else is relaxed.

const API = 'https://api.acme.test'
const REDIRECT = 'http://127.0.0.1:9/cb'
const { app, base } = await listeningApp(t)
// Why a raised budget: the file makes a few hundred requests from one address.
const tenant = await createTenant(app, {
  rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null },
  oauth: { resources: [{ indicator: API, name: 'Invoices', scopes: ['invoices:read', 'invoices:write'] }] },
})
const username = `o4w-${randomUUID().slice(0, 8)}`
const user = await createUser(app, tenant, { roles: ['user'], username })
const issuer = new URL(`${base}/t/${tenant.code}`)
const http = { [o.allowInsecureRequests]: true }
const as = await o.processDiscoveryResponse(issuer, await o.discoveryRequest(issuer, http))

/** A registered client as oauth4webapi holds it: its metadata and the authentication it registered with. */
interface Party {
  name: string
  client: o.Client
  auth: o.ClientAuth
}

async function party(name: string, body: Partial<BodyOf<'createOAuthClient'>>): Promise<Party> {
  const reg = await registerClient(app, tenant, body)
  const secret = reg.clientSecret ?? ''
  const auth = (() => {
    switch (reg.tokenEndpointAuthMethod) {
      case 'none':
        return o.None()
      case 'client_secret_post':
        return o.ClientSecretPost(secret)
      case 'client_secret_basic':
        return o.ClientSecretBasic(secret)
    }
  })()
  return { name: `${name} (${reg.tokenEndpointAuthMethod})`, client: { client_id: reg.clientId }, auth }
}

const confidential: Partial<BodyOf<'createOAuthClient'>> = {
  scopes: ['openid', 'email', 'profile', 'offline_access', 'invoices:read'],
  grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
}
const pub = await party('public', { type: 'public', redirectUris: [REDIRECT] })
const basic = await party('confidential', confidential)
const post = await party('confidential', { ...confidential, tokenEndpointAuthMethod: 'client_secret_post' })

/** How an oauth4webapi call refused: the OAuth error of the answer, or the code and message of its own check. */
async function refusal(p: Promise<unknown>) {
  try {
    await p
  } catch (e) {
    if (e instanceof o.ResponseBodyError) return { status: e.status, error: e.error }
    if (e instanceof o.WWWAuthenticateChallengeError) return { status: e.status, challenge: e.cause[0] }
    if (e instanceof o.OperationProcessingError) return { code: e.code, message: e.message }
    throw e
  }
  return null
}

/** The authorization request, built from discovery with oauth4webapi's PKCE, state and nonce, up to the callback. */
async function authorize(p: Party, scope = 'openid email profile') {
  const checks = {
    verifier: o.generateRandomCodeVerifier(),
    state: o.generateRandomState(),
    nonce: o.generateRandomNonce(),
  }
  const url = new URL(as.authorization_endpoint ?? '')
  url.search = new URLSearchParams({
    client_id: p.client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    code_challenge: await o.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
    state: checks.state,
    nonce: checks.nonce,
  }).toString()
  const flow = await openAuthorization(base, url, checks)
  return { flow, callback: await signIn(app, flow, user) }
}

/**
 * validateAuthResponse, then the code exchange with the ID token required, its claims and nonce checked, and
 * its signature verified with the JWKS of discovery.
 */
async function codeFlow(p: Party, scope?: string) {
  const { flow, callback } = await authorize(p, scope)
  const params = o.validateAuthResponse(as, p.client, callback, flow.state)
  const res = await o.authorizationCodeGrantRequest(
    as,
    p.client,
    p.auth,
    params,
    REDIRECT,
    flow.verifier,
    http,
  )
  const tokens = await o.processAuthorizationCodeResponse(as, p.client, res, {
    expectedNonce: flow.nonce,
    requireIdToken: true,
  })
  await o.validateApplicationLevelSignature(as, res, http)
  return { flow, tokens }
}

/** A JWT with the first character of its signature changed. */
function forge(jwt: string): string {
  const [head, body, signature = ''] = jwt.split('.')
  return `${head}.${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`
}

const introspect = async (p: Party, token: string) =>
  o.processIntrospectionResponse(
    as,
    p.client,
    await o.introspectionRequest(as, p.client, p.auth, token, http),
  )
const refresh = async (p: Party, token: string) =>
  o.processRefreshTokenResponse(
    as,
    p.client,
    await o.refreshTokenGrantRequest(as, p.client, p.auth, token, http),
  )
const userInfo = async (p: Party, token: string, sub: string) =>
  o.processUserInfoResponse(as, p.client, sub, await o.userInfoRequest(as, p.client, token, http))

t.test(
  'getOpenIdConfiguration, getOAuthServerMetadata: oauth4webapi discovers the issuer both ways',
  async (t) => {
    const oidc = await o.discoveryRequest(issuer, { ...http, algorithm: 'oidc' })
    t.equal(new URL(oidc.url).pathname, `/t/${tenant.code}/.well-known/openid-configuration`)
    const viaOidc = await o.processDiscoveryResponse(issuer, oidc)
    const oauth = await o.discoveryRequest(issuer, { ...http, algorithm: 'oauth2' })
    t.equal(
      new URL(oauth.url).pathname,
      `/.well-known/oauth-authorization-server/t/${tenant.code}`,
      'RFC 8414',
    )
    const viaOauth = await o.processDiscoveryResponse(issuer, oauth)
    t.equal(viaOidc.issuer, issuer.href)
    t.same(viaOauth, viaOidc, 'the same metadata at both addresses')
    t.equal(
      viaOidc.authorization_response_iss_parameter_supported,
      true,
      'RFC 9207: validateAuthResponse needs iss',
    )
    t.same(viaOidc.code_challenge_methods_supported, ['S256'])
    const elsewhere = new URL(`${base}/t/${tenant.code}-other`)
    t.match(
      await refusal(o.processDiscoveryResponse(elsewhere, await o.discoveryRequest(issuer, http))),
      { code: o.JSON_ATTRIBUTE_COMPARISON, message: /"issuer"/ },
      'an issuer other than the expected one is refused',
    )
  },
)

t.test('exchangeOidcToken: the code flow, as oauth4webapi drives it, for each kind of client', async (t) => {
  for (const p of [pub, basic, post]) {
    const { flow, tokens } = await codeFlow(p)
    const claims = o.getValidatedIdTokenClaims(tokens)
    t.match(
      claims,
      {
        iss: issuer.href,
        aud: p.client.client_id,
        sub: user.id,
        nonce: flow.nonce,
        email: user.email,
        preferred_username: username,
      },
      p.name,
    )
    t.type(claims?.auth_time, 'number', `${p.name}: auth_time`)
    t.equal(tokens.token_type, 'bearer', p.name)
    t.equal(tokens.refresh_token, undefined, `${p.name}: no refresh token without offline_access`)
  }
})

t.test('exchangeOidcToken: the ID token checks can fail: another nonce, a forged signature', async (t) => {
  const { flow, callback } = await authorize(basic)
  const params = o.validateAuthResponse(as, basic.client, callback, flow.state)
  const res = await o.authorizationCodeGrantRequest(
    as,
    basic.client,
    basic.auth,
    params,
    REDIRECT,
    flow.verifier,
    http,
  )
  t.match(
    await refusal(
      o.processAuthorizationCodeResponse(as, basic.client, res.clone(), {
        expectedNonce: o.generateRandomNonce(),
      }),
    ),
    { code: o.JWT_CLAIM_COMPARISON, message: /"nonce"/ },
  )
  const body = (await res.clone().json()) as { id_token: string }
  const forgedAnswer = new Response(JSON.stringify({ ...body, id_token: forge(body.id_token) }), {
    headers: { 'content-type': 'application/json' },
  })
  await o.processAuthorizationCodeResponse(as, basic.client, forgedAnswer, { expectedNonce: flow.nonce })
  t.match(
    await refusal(o.validateApplicationLevelSignature(as, forgedAnswer, http)),
    { code: o.INVALID_RESPONSE, message: 'JWT signature verification failed' },
    'the signature is checked with the JWKS',
  )
  const tokens = await o.processAuthorizationCodeResponse(as, basic.client, res, {
    expectedNonce: flow.nonce,
  })
  t.equal(o.getValidatedIdTokenClaims(tokens)?.nonce, flow.nonce, 'the same answer, with the right nonce')
})

t.test(
  'exchangeOidcToken: refresh tokens rotate; a reused one is invalid_grant and ends the grant',
  async (t) => {
    const { tokens } = await codeFlow(basic, 'openid offline_access')
    const first = tokens.refresh_token ?? ''
    t.not(first, '', 'a refresh token with offline_access')
    const next = await refresh(basic, first)
    t.type(next.refresh_token, 'string')
    t.not(next.refresh_token, first, 'rotated')
    t.not(next.access_token, tokens.access_token)
    t.equal((await introspect(basic, next.access_token)).active, true, 'the new access token is live')
    t.match(
      await refusal(refresh(basic, first)),
      { status: 400, error: 'invalid_grant' },
      'the old one, reused',
    )
    t.match(
      await refusal(refresh(basic, next.refresh_token ?? '')),
      { status: 400, error: 'invalid_grant' },
      'then the rotated one too: the grant is revoked',
    )
    t.equal((await introspect(basic, next.access_token)).active, false, 'and its access token with it')
  },
)

t.test('exchangeOidcToken: a wrong PKCE verifier is invalid_grant', async (t) => {
  for (const p of [pub, basic]) {
    const { flow, callback } = await authorize(p)
    const params = o.validateAuthResponse(as, p.client, callback, flow.state)
    const wrong = o.generateRandomCodeVerifier()
    const res = await o.authorizationCodeGrantRequest(as, p.client, p.auth, params, REDIRECT, wrong, http)
    t.match(await refusal(o.processAuthorizationCodeResponse(as, p.client, res)), {
      status: 400,
      error: 'invalid_grant',
    })
  }
})

t.test(
  'authorizeOidc: validateAuthResponse refuses a tampered iss or state, and takes the answer as sent',
  async (t) => {
    const { flow, callback } = await authorize(basic)
    t.equal(callback.searchParams.get('iss'), issuer.href, 'iss in the authorization response')
    const tampered = (edit: (q: URLSearchParams) => void) => {
      const copy = new URL(callback)
      edit(copy.searchParams)
      return () => o.validateAuthResponse(as, basic.client, copy, flow.state)
    }
    t.throws(
      tampered((q) => q.set('iss', `${base}/t/someone-else`)),
      { code: o.INVALID_RESPONSE, message: 'unexpected "iss" (issuer) response parameter value' },
      'another iss',
    )
    t.throws(
      tampered((q) => q.delete('iss')),
      { code: o.INVALID_RESPONSE, message: 'response parameter "iss" (issuer) missing' },
      'no iss',
    )
    t.throws(
      tampered((q) => q.set('state', o.generateRandomState())),
      { code: o.INVALID_RESPONSE, message: 'unexpected "state" response parameter value' },
      'another state',
    )
    const params = o.validateAuthResponse(as, basic.client, callback, flow.state)
    const res = await o.authorizationCodeGrantRequest(
      as,
      basic.client,
      basic.auth,
      params,
      REDIRECT,
      flow.verifier,
      http,
    )
    const tokens = await o.processAuthorizationCodeResponse(as, basic.client, res, {
      expectedNonce: flow.nonce,
    })
    t.equal(o.getValidatedIdTokenClaims(tokens)?.sub, user.id, 'the untouched answer exchanges')
  },
)

t.test('getOidcUserinfo: the claims of the granted scopes, for the expected subject', async (t) => {
  const { tokens } = await codeFlow(pub)
  const res = await o.userInfoRequest(as, pub.client, tokens.access_token, http)
  t.match(
    await refusal(o.processUserInfoResponse(as, pub.client, basic.client.client_id, res.clone())),
    { code: o.JSON_ATTRIBUTE_COMPARISON, message: /"sub"/ },
    'another subject expected: refused',
  )
  const info = await o.processUserInfoResponse(as, pub.client, user.id, res)
  t.match(info, { sub: user.id, email: user.email, email_verified: false })
  t.equal(info.preferred_username, username, 'profile')
})

t.test('introspectOidcToken, revokeOidcToken: live, then revoked, for the client’s own tokens', async (t) => {
  await t.test('an access token', async (t) => {
    const { tokens } = await codeFlow(post)
    const live = await introspect(post, tokens.access_token)
    t.match(live, { active: true, client_id: post.client.client_id, sub: user.id, scope: /\bopenid\b/ })
    t.equal((await introspect(basic, tokens.access_token)).active, false, 'another client’s token')
    t.equal((await userInfo(post, tokens.access_token, user.id)).sub, user.id, 'userinfo takes it')
    const revoked = await o.revocationRequest(as, post.client, post.auth, tokens.access_token, http)
    await t.resolves(o.processRevocationResponse(revoked), 'RFC 7009: 200')
    t.equal((await introspect(post, tokens.access_token)).active, false, 'revoked')
    t.match(
      await refusal(userInfo(post, tokens.access_token, user.id)),
      { status: 401, challenge: { scheme: 'bearer', parameters: { error: 'invalid_token' } } },
      'userinfo refuses it',
    )
  })
  await t.test('a refresh token', async (t) => {
    const { tokens } = await codeFlow(basic, 'openid offline_access')
    const refreshToken = tokens.refresh_token ?? ''
    t.match(await introspect(basic, refreshToken), {
      active: true,
      client_id: basic.client.client_id,
      sub: user.id,
    })
    const revoked = await o.revocationRequest(as, basic.client, basic.auth, refreshToken, {
      ...http,
      additionalParameters: { token_type_hint: 'refresh_token' },
    })
    await t.resolves(o.processRevocationResponse(revoked), 'RFC 7009: 200')
    t.equal((await introspect(basic, refreshToken)).active, false, 'revoked')
    t.match(await refusal(refresh(basic, refreshToken)), { status: 400, error: 'invalid_grant' })
  })
})

t.test('exchangeOidcToken: client credentials for a resource, validated as an RFC 9068 token', async (t) => {
  for (const p of [basic, post]) {
    const res = await o.clientCredentialsGrantRequest(
      as,
      p.client,
      p.auth,
      { resource: API, scope: 'invoices:read' },
      http,
    )
    const tokens = await o.processClientCredentialsResponse(as, p.client, res)
    t.equal(tokens.scope, 'invoices:read', p.name)
    const request = (token: string) =>
      new Request(`${API}/invoices`, { headers: { authorization: `Bearer ${token}` } })
    const options = { ...http, signingAlgorithms: ['RS256'] }
    const claims = await o.validateJwtAccessToken(as, request(tokens.access_token), API, options)
    t.match(
      claims,
      { iss: issuer.href, aud: API, sub: p.client.client_id, client_id: p.client.client_id },
      p.name,
    )
    t.equal(claims.scope, 'invoices:read')
    t.match(
      await refusal(o.validateJwtAccessToken(as, request(tokens.access_token), `${API}/other`, options)),
      { code: o.JWT_CLAIM_COMPARISON, message: /"aud"/ },
      `${p.name}: bound to its audience`,
    )
    t.match(
      await refusal(o.validateJwtAccessToken(as, request(forge(tokens.access_token)), API, options)),
      { code: o.INVALID_RESPONSE, message: 'JWT signature verification failed' },
      `${p.name}: a forged signature fails`,
    )
  }
})
