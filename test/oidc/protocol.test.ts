import t from 'tap'
import { call } from '../helpers/call.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import {
  client,
  discover,
  follow,
  interact,
  listeningApp,
  registerClient,
  signIn,
  startFlow,
} from '../helpers/oidc.js'

// The provider's protocol endpoints as standard clients meet them (contract section 23, "Tokens" and
// "Security rules"), on a listening service, with openid-client and a browser played by fetch.

const { app, base } = await listeningApp(t)
// Why a raised budget: this file makes a few hundred requests from one address (the tenant's own applies
// to its provider's endpoints).
const tenant = await createTenant(app, { rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null } })
const other = await createTenant(app)
const user = await createUser(app, tenant, { roles: ['user'] })
const conf = await registerClient(app, tenant)
const config = await discover(base, tenant, conf.clientId, conf.clientSecret)
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  })

/** The OAuth `error` a rejected client call carried, or null when it succeeded. */
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { error?: string }) => e.error ?? String(e),
  )

/** A finished code flow: the callback URL and the checks its exchange needs. */
async function codeFor(params: Record<string, string> = {}) {
  const flow = await startFlow(base, config, params)
  return { flow, callback: await signIn(app, flow, user) }
}

t.test('getOAuthServerMetadata: the RFC 8414 address answers the discovery document', async (t) => {
  const res = await fetch(`${base}/.well-known/oauth-authorization-server/t/${tenant.code}`)
  t.equal(res.status, 200)
  const doc = (await res.json()) as Record<string, unknown>
  t.same(doc, config.serverMetadata(), 'the same JSON as the OpenID discovery')
  t.same(doc.code_challenge_methods_supported, ['S256'])
  t.same(doc.response_types_supported, ['code'])
  t.equal(doc.request_parameter_supported, false)
  const unknown = await fetch(`${base}/.well-known/oauth-authorization-server/t/no-such-tenant`)
  t.equal(unknown.status, 404)
  const query = await fetch(`${base}/.well-known/oauth-authorization-server/t/${tenant.code}?x=1`)
  t.equal(query.status, 400)
})

t.test('authorizeOidc: the authorization endpoint', async (t) => {
  await t.test(
    '400 error page, no redirect, for an unknown client or an unregistered redirect URI',
    async (t) => {
      for (const q of [
        { client_id: 'no-such-client-0000', redirect_uri: 'http://127.0.0.1:9/cb' },
        { client_id: conf.clientId, redirect_uri: 'http://127.0.0.1:9/elsewhere' },
      ]) {
        const res = await fetch(
          `${base}/t/${tenant.code}/auth?${form({ ...q, response_type: 'code', scope: 'openid' })}`,
          {
            redirect: 'manual',
          },
        )
        t.equal(res.status, 400)
        t.equal(res.headers.get('location'), null, 'redirects nowhere')
        t.match(res.headers.get('content-type'), /text\/html/)
      }
    },
  )
  await t.test(
    'PKCE is required: a request without a challenge, or with plain, goes back with an error',
    async (t) => {
      const extras: Record<string, string>[] = [
        {},
        { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
      ]
      for (const extra of extras) {
        const q = {
          client_id: conf.clientId,
          redirect_uri: 'http://127.0.0.1:9/cb',
          response_type: 'code',
          scope: 'openid',
          state: 's1',
          ...extra,
        }
        const res = await fetch(`${base}/t/${tenant.code}/auth?${form(q)}`, { redirect: 'manual' })
        t.equal(res.status, 303)
        const back = new URL(res.headers.get('location') ?? '')
        t.equal(back.searchParams.get('error'), 'invalid_request')
        t.equal(back.searchParams.get('state'), 's1', 'state as sent')
        t.equal(back.searchParams.get('iss'), `${base}/t/${tenant.code}`)
      }
    },
  )
  await t.test('a client of another tenant is unknown there', async (t) => {
    const q = {
      client_id: conf.clientId,
      redirect_uri: 'http://127.0.0.1:9/cb',
      response_type: 'code',
      scope: 'openid',
    }
    const res = await fetch(`${base}/t/${other.code}/auth?${form(q)}`, { redirect: 'manual' })
    t.equal(res.status, 400)
  })
  await t.test('404 TENANT_NOT_FOUND for an unknown tenant', async (t) => {
    const res = await fetch(`${base}/t/no-such-tenant/auth?client_id=x`, { redirect: 'manual' })
    t.equal(res.status, 404)
    t.equal(((await res.json()) as { code: string }).code, 'TENANT_NOT_FOUND')
  })
  await t.test('200 form_post once the browser has a session and the grant', async (t) => {
    const { flow } = await codeFor()
    const verifier = client.randomPKCECodeVerifier()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:9/cb',
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      response_mode: 'form_post',
      state: 'fp',
    })
    const res = await flow.browser.fetch(url.href)
    t.equal(res.status, 200)
    t.match(await res.text(), /<form[^>]+method="post"[^>]+action="http:\/\/127\.0\.0\.1:9\/cb"/)
  })
})

t.test(
  'resumeOidcAuthorization: 400 without the interaction’s cookies, 404 for an unknown tenant',
  async (t) => {
    const flow = await startFlow(base, config)
    const login = await interact(flow, 'login', await tokenFor(app, user))
    const resume = login.json.data?.redirectTo ?? ''
    const bare = await fetch(resume, { redirect: 'manual' })
    t.equal(bare.status, 400, 'another browser cannot resume it')
    const gone = await fetch(resume.replace(`/t/${tenant.code}/`, '/t/no-such-tenant/'), {
      redirect: 'manual',
    })
    t.equal(gone.status, 404)
    const fp = await startFlow(base, config, { response_mode: 'form_post' })
    const fpLogin = await interact(fp, 'login', await tokenFor(app, user))
    const consentPage = await follow(fp, fpLogin.json.data?.redirectTo ?? '')
    const answer = await interact(
      { ...fp, interactionUrl: consentPage.href },
      'consent',
      await tokenFor(app, user),
      { approve: true },
    )
    const done = await fp.browser.fetch(answer.json.data?.redirectTo ?? '')
    t.equal(done.status, 200, 'form_post: the page that posts the code to the client')
  },
)

t.test(
  'exchangeOidcToken: codes are single use and bound to the client, the redirect URI and PKCE',
  async (t) => {
    const { flow, callback } = await codeFor()
    const code = callback.searchParams.get('code') ?? ''
    const wrongVerifier = await post(
      `/t/${tenant.code}/token`,
      form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1:9/cb',
        code_verifier: 'x'.repeat(43),
      }),
      { authorization: basic(conf.clientId, conf.clientSecret ?? '') },
    )
    t.equal(wrongVerifier.status, 400)
    t.equal(((await wrongVerifier.json()) as { error: string }).error, 'invalid_grant')
    const second = await codeFor()
    const tokens = await client.authorizationCodeGrant(config, second.callback, {
      pkceCodeVerifier: second.flow.verifier,
      expectedState: second.flow.state,
      expectedNonce: second.flow.nonce,
    })
    t.ok(tokens.access_token)
    const reuse = await post(
      `/t/${tenant.code}/token`,
      form({
        grant_type: 'authorization_code',
        code: second.callback.searchParams.get('code') ?? '',
        redirect_uri: 'http://127.0.0.1:9/cb',
        code_verifier: second.flow.verifier,
      }),
      { authorization: basic(conf.clientId, conf.clientSecret ?? '') },
    )
    t.equal(reuse.status, 400, 'a second use')
    const info = await fetch(`${base}/t/${tenant.code}/me`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    t.equal(info.status, 401, 'the reuse revoked what the first use issued')
    const wrongSecret = await post(
      `/t/${tenant.code}/token`,
      form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1:9/cb',
        code_verifier: flow.verifier,
      }),
      { authorization: basic(conf.clientId, 'wrong-secret') },
    )
    t.equal(wrongSecret.status, 401)
    t.equal(((await wrongSecret.json()) as { error: string }).error, 'invalid_client')
    t.ok(wrongSecret.headers.get('www-authenticate'), 'WWW-Authenticate')
    const elsewhere = await post(`/t/${other.code}/token`, form({ grant_type: 'client_credentials' }), {
      authorization: basic(conf.clientId, conf.clientSecret ?? ''),
    })
    t.equal(elsewhere.status, 401, 'a client of one tenant is invalid_client at another’s')
    const missing = await post('/t/no-such-tenant/token', form({ grant_type: 'client_credentials' }))
    t.equal(missing.status, 404)
  },
)

t.test('exchangeOidcToken: a public client with PKCE alone; a loopback redirect on any port', async (t) => {
  const pub = await registerClient(app, tenant, { type: 'public', redirectUris: ['http://127.0.0.1/cb'] })
  const pubConfig = await discover(base, tenant, pub.clientId)
  const flow = await startFlow(base, pubConfig, { redirect_uri: 'http://127.0.0.1:4711/cb' })
  const callback = await signIn(app, flow, user)
  t.equal(callback.port, '4711')
  const tokens = await client.authorizationCodeGrant(pubConfig, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  })
  t.equal(tokens.claims()?.sub, user.id)
})

t.test('exchangeOidcToken: refresh tokens rotate, and a reused one revokes the grant', async (t) => {
  const { flow, callback } = await codeFor({ scope: 'openid offline_access' })
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  })
  const first = tokens.refresh_token ?? ''
  t.ok(first, 'offline_access without prompt=consent')
  const next = await client.refreshTokenGrant(config, first)
  t.not(next.refresh_token, first)
  t.equal(await errorOf(client.refreshTokenGrant(config, first)), 'invalid_grant', 'a reused one')
  t.equal(
    await errorOf(client.refreshTokenGrant(config, next.refresh_token ?? '')),
    'invalid_grant',
    'and the grant died with it',
  )
})

t.test(
  'getOidcUserinfo, postOidcUserinfo: the claims of the granted scopes, a bearer header only',
  async (t) => {
    const { flow, callback } = await codeFor()
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
    const get = await fetch(`${base}/t/${tenant.code}/me`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    t.equal(get.status, 200)
    t.match(await get.json(), { sub: user.id, email: user.email, email_verified: false })
    const viaPost = await post(`/t/${tenant.code}/me`, '', { authorization: `Bearer ${tokens.access_token}` })
    t.equal(viaPost.status, 200)
    const inQuery = await fetch(`${base}/t/${tenant.code}/me?access_token=${tokens.access_token}`)
    t.equal(inQuery.status, 400, 'never a token in the query')
    t.equal((await post(`/t/${tenant.code}/me`, '')).status, 401)
    t.equal((await fetch(`${base}/t/no-such-tenant/me`)).status, 404)
    t.equal((await post('/t/no-such-tenant/me', '')).status, 404)
  },
)

t.test('introspectOidcToken, revokeOidcToken: the client’s own tokens only', async (t) => {
  const { flow, callback } = await codeFor()
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  })
  const auth = { authorization: basic(conf.clientId, conf.clientSecret ?? '') }
  const live = await post(`/t/${tenant.code}/token/introspection`, form({ token: tokens.access_token }), auth)
  t.equal(live.status, 200)
  t.match(await live.json(), { active: true, client_id: conf.clientId, sub: user.id })
  const stranger = await registerClient(app, tenant)
  const theirs = await post(`/t/${tenant.code}/token/introspection`, form({ token: tokens.access_token }), {
    authorization: basic(stranger.clientId, stranger.clientSecret ?? ''),
  })
  t.same(await theirs.json(), { active: false }, 'another client’s token')
  t.equal((await post(`/t/${tenant.code}/token/introspection`, form({}), auth)).status, 400)
  t.equal(
    (
      await post(`/t/${tenant.code}/token/introspection`, form({ token: 'x' }), {
        authorization: basic(conf.clientId, 'no'),
      })
    ).status,
    401,
  )
  t.equal((await post('/t/no-such-tenant/token/introspection', form({ token: 'x' }))).status, 404)
  const strangers = await post(`/t/${tenant.code}/token/revocation`, form({ token: tokens.access_token }), {
    authorization: basic(stranger.clientId, stranger.clientSecret ?? ''),
  })
  t.equal(strangers.status, 200, 'another client’s revocation: answered as for an unknown token')
  const still = await post(
    `/t/${tenant.code}/token/introspection`,
    form({ token: tokens.access_token }),
    auth,
  )
  t.match(await still.json(), { active: true }, 'and the token is left alone')
  const revoked = await post(`/t/${tenant.code}/token/revocation`, form({ token: tokens.access_token }), auth)
  t.equal(revoked.status, 200)
  const after = await post(
    `/t/${tenant.code}/token/introspection`,
    form({ token: tokens.access_token }),
    auth,
  )
  t.same(await after.json(), { active: false }, 'revoked')
  t.equal((await post(`/t/${tenant.code}/token/revocation`, form({}), auth)).status, 400)
  t.equal(
    (
      await post(`/t/${tenant.code}/token/revocation`, form({ token: 'x' }), {
        authorization: basic(conf.clientId, 'no'),
      })
    ).status,
    401,
  )
  t.equal((await post('/t/no-such-tenant/token/revocation', form({ token: 'x' }))).status, 404)
})

t.test(
  'exchangeOidcToken: a password reset, a deactivation or “sign out everywhere” ends the grants',
  async (t) => {
    for (const end of ['deactivate', 'revokeAll'] as const) {
      const person = await createUser(app, tenant, { roles: ['user'] })
      const flow = await startFlow(base, config, { scope: 'openid offline_access' })
      const tokens = await client.authorizationCodeGrant(config, await signIn(app, flow, person), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      })
      const admin = await createUser(app, tenant, { roles: ['admin'] })
      const as = { token: await tokenFor(app, admin) }
      const res =
        end === 'deactivate'
          ? await call(app, 'updateUser', as, { params: { userId: person.id }, body: { status: 'INACTIVE' } })
          : await call(app, 'revokeUserSessions', as, { params: { userId: person.id } })
      t.equal(res.status, 200, end)
      t.equal(
        await errorOf(client.refreshTokenGrant(config, tokens.refresh_token ?? '')),
        'invalid_grant',
        end,
      )
      const auth = { authorization: basic(conf.clientId, conf.clientSecret ?? '') }
      const intro = await post(
        `/t/${tenant.code}/token/introspection`,
        form({ token: tokens.access_token }),
        auth,
      )
      t.same(await intro.json(), { active: false }, `${end}: the access token introspects inactive`)
    }
  },
)

t.test('listMyOAuthGrants, revokeMyOAuthGrant: a user withdraws an application', async (t) => {
  const person = await createUser(app, tenant, { roles: ['user'] })
  const flow = await startFlow(base, config, { scope: 'openid email offline_access' })
  const tokens = await client.authorizationCodeGrant(config, await signIn(app, flow, person), {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  })
  const me = { token: await tokenFor(app, person) }
  const list = await call(app, 'listMyOAuthGrants', me)
  t.equal(list.status, 200)
  t.equal(list.data.items.length, 1, 'this user’s own grant only, not the other users’ of the same client')
  t.match(list.data.items[0], { clientId: conf.clientId, name: 'Test app' })
  t.ok(list.data.items[0]?.scopes.includes('email'), 'with the scopes granted')
  const gone = await call(app, 'revokeMyOAuthGrant', me, { params: { clientId: conf.clientId } })
  t.equal(gone.status, 200)
  t.same(gone.data, { clientId: conf.clientId, revoked: true })
  t.equal(await errorOf(client.refreshTokenGrant(config, tokens.refresh_token ?? '')), 'invalid_grant')
  const auth = { authorization: basic(conf.clientId, conf.clientSecret ?? '') }
  const intro = await post(
    `/t/${tenant.code}/token/introspection`,
    form({ token: tokens.access_token }),
    auth,
  )
  t.same(await intro.json(), { active: false })
  t.equal((await call(app, 'listMyOAuthGrants', me)).data.items.length, 0)
  const again = await call(app, 'revokeMyOAuthGrant', me, { params: { clientId: conf.clientId } })
  t.equal(again.status, 404)
  t.equal(again.code, 'OAUTH_CLIENT_NOT_FOUND')
})
