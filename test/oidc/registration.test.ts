import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, userWithToken } from '../helpers/fixtures.js'
import { Browser, listeningApp, signIn } from '../helpers/oidc.js'

// Dynamic client registration (contract section 23, RFC 7591) as an MCP client meets it: the
// @modelcontextprotocol/sdk client discovers the MCP server's protected-resource metadata (RFC 9728, served
// here by a loopback stand-in), then the tenant's metadata, registers, and runs the code flow with PKCE and
// `resource`.

const mcp = createServer((req, res) => {
  if (
    req.url === '/.well-known/oauth-protected-resource/mcp' ||
    req.url === '/.well-known/oauth-protected-resource'
  ) {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ resource: mcpUrl, authorization_servers: [issuer] }))
    return
  }
  res.writeHead(404).end()
})
await new Promise<void>((r) => mcp.listen(0, '127.0.0.1', r))
t.teardown(() => new Promise<void>((r) => mcp.close(() => r())))
const mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`

const { app, base } = await listeningApp(t)
const tenant = await createTenant(app, {
  rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null },
  oauth: { dynamicRegistration: true, resources: [{ indicator: mcpUrl, scopes: ['mcp:tools'] }] },
})
const issuer = `${base}/t/${tenant.code}`
const user = await createUser(app, tenant, { roles: ['user'] })

/** An MCP client's storage, in memory, as the SDK's OAuthClientProvider interface asks. */
class MemoryProvider implements OAuthClientProvider {
  readonly redirectUrl = 'http://127.0.0.1:9/mcp-callback'
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  sentTo: URL | undefined
  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [this.redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP Inspector',
      scope: 'mcp:tools offline_access',
    }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.sentTo = url
  }
  saveCodeVerifier(v: string) {
    this.verifier = v
  }
  codeVerifier() {
    return this.verifier
  }
}

const register = (body: object, headers: Record<string, string> = {}) =>
  fetch(`${issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

t.test(
  'registerOidcClient: the MCP SDK client discovers, registers, and signs in for its resource',
  async (t) => {
    const provider = new MemoryProvider()
    t.equal(await auth(provider, { serverUrl: mcpUrl }), 'REDIRECT')
    const clientId = provider.info?.client_id ?? ''
    t.ok(clientId, 'registered')
    const sentTo = provider.sentTo ?? new URL('http://x')
    t.equal(sentTo.origin + sentTo.pathname, `${issuer}/auth`, 'to the tenant’s authorization endpoint')
    t.equal(sentTo.searchParams.get('code_challenge_method'), 'S256')
    t.equal(sentTo.searchParams.get('resource'), mcpUrl)
    const browser = new Browser()
    const res = await browser.fetch(sentTo.href)
    const location = new URL(res.headers.get('location') ?? '', base)
    const uid = /\/interaction\/([^/?]+)/.exec(location.pathname)?.[1] ?? ''
    const callback = await signIn(
      app,
      { browser, interactionUrl: location.href, uid, verifier: '', state: '', nonce: '' },
      user,
    )
    const code = callback.searchParams.get('code') ?? ''
    t.ok(code, 'a code at the MCP client’s callback')
    t.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: code }), 'AUTHORIZED')
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`))
    const { payload } = await jwtVerify(provider.saved?.access_token ?? '', jwks, {
      issuer,
      audience: mcpUrl,
    })
    t.equal(payload.sub, user.id)
    t.equal(payload.client_id, clientId)
    t.equal(payload.scope, 'mcp:tools')
    const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const listed = await call(app, 'listOAuthClients', cred, { query: { limit: 100 } })
    const row = listed.data.items.find((c) => c.clientId === clientId)
    t.match(row, { dynamic: true, firstParty: false, type: 'public', name: 'MCP Inspector' })
    const gone = await call(app, 'deleteOAuthClient', cred, { params: { id: row?.id ?? '' } })
    t.equal(gone.status, 200, 'an administrator deletes it')
  },
)

t.test('registerOidcClient: public clients only, with redirect URIs under the rules', async (t) => {
  const uris = ['http://127.0.0.1:9/cb']
  const secret = await register({ redirect_uris: uris, token_endpoint_auth_method: 'client_secret_basic' })
  t.equal(secret.status, 400)
  t.match(await secret.json(), { error: 'invalid_client_metadata' })
  const implicit = await register({ redirect_uris: uris }) // RFC 7591's default is client_secret_basic
  t.equal(implicit.status, 400, 'no method named is a confidential client')
  const cc = await register({
    redirect_uris: uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['client_credentials'],
  })
  t.match(await cc.json(), { error: 'invalid_client_metadata' })
  for (const bad of ['javascript:alert(1)', 'https://app.test/cb#frag', 'https://*.app.test/cb']) {
    const res = await register({ redirect_uris: [bad], token_endpoint_auth_method: 'none' })
    t.equal(res.status, 400, bad)
    t.match(await res.json(), { error: 'invalid_redirect_uri' })
  }
  const notObject = await register([{ redirect_uris: uris }])
  t.match(await notObject.json(), { error: 'invalid_client_metadata' }, 'a body that is not an object')
  const many = await register({
    redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:9/cb${i}`),
    token_endpoint_auth_method: 'none',
  })
  t.match(await many.json(), { error: 'invalid_redirect_uri' }, 'more than 10 redirect URIs')
  const none = await register({ token_endpoint_auth_method: 'none' })
  t.match(await none.json(), { error: 'invalid_redirect_uri' }, 'no redirect URI')
  const sneaky = await register({
    redirect_uris: uris,
    token_endpoint_auth_method: 'none',
    tessera_first_party: true,
    scope: 'unknown:scope',
  })
  t.equal(sneaky.status, 201)
  const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
  const sneakyId = ((await sneaky.json()) as { client_id: string }).client_id
  const listed = await call(app, 'listOAuthClients', cred, { query: { limit: 100 } })
  t.match(
    listed.data.items.find((c) => c.clientId === sneakyId),
    { firstParty: false, scopes: [] },
    'a registrant never sets our own metadata, and an unknown scope is not given',
  )
  const ok = await register({ redirect_uris: uris, token_endpoint_auth_method: 'none', scope: 'openid' })
  t.equal(ok.status, 201)
  const body = (await ok.json()) as Record<string, unknown>
  t.notOk('client_secret' in body, 'no secret')
  t.notOk('registration_access_token' in body, 'no registration access token')
})

t.test('registerOidcClient: off by default (404, and not in the discovery document)', async (t) => {
  const off = await createTenant(app)
  const res = await fetch(`${base}/t/${off.code}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
  })
  t.equal(res.status, 404)
  const doc = (await (
    await fetch(`${base}/t/${off.code}/.well-known/openid-configuration`)
  ).json()) as Record<string, unknown>
  t.notOk('registration_endpoint' in doc)
  const on = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >
  t.equal(on.registration_endpoint, `${issuer}/reg`)
})

t.test('registerOidcClient: at most 10 registrations an hour from one address', async (t) => {
  const busy = await createTenant(app, { oauth: { dynamicRegistration: true } })
  const statuses: number[] = []
  for (let i = 0; i < 11; i++) {
    const res = await fetch(`${base}/t/${busy.code}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
    })
    statuses.push(res.status)
    if (i === 10) t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After')
  }
  t.same(statuses, [...Array(10).fill(201), 429])
})
