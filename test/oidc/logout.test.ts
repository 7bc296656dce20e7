import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose'
import { call, loginTokens, logoutWith } from '../helpers/call.js'
import { activeSessions, createTenant, createUser, userWithToken, waitFor } from '../helpers/fixtures.js'
import type { UserFx } from '../helpers/fixtures.js'
import {
  client,
  discover,
  exchangeCode,
  follow,
  interact,
  listeningApp,
  registerClient,
  startFlow,
} from '../helpers/oidc.js'

// Logout (contract section 23): RP-initiated logout at end_session_endpoint, and back-channel logout tokens
// to a receiver on loopback (allowed by OUTBOUND_ALLOWED_HOSTS), whichever side the session ended on.

const received: string[] = []
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const token = new URLSearchParams(body).get('logout_token')
    if (token) received.push(token)
    res.writeHead(200).end()
  })
})
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
t.teardown(() => new Promise<void>((r) => receiver.close(() => r())))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/logout`

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app, { rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null } })
const issuer = `${base}/t/${tenant.code}`
const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`))
const BYE = 'http://127.0.0.1:9/bye'
const reg = await registerClient(app, tenant, {
  backchannelLogoutUri: receiverUrl,
  postLogoutRedirectUris: [BYE],
  firstParty: true,
})
const config = await discover(base, tenant, reg.clientId, reg.clientSecret)

/** A real sign-in (POST /login), handed to the interaction: the tokens of both sides. */
async function signedIn(user: UserFx) {
  const tessera = await loginTokens(app, user)
  const flow = await startFlow(base, config, { scope: 'openid offline_access' })
  const login = await interact(flow, 'login', tessera.accessToken)
  t.equal(login.status, 200)
  const callback = await follow(flow, login.json.data?.redirectTo ?? '')
  const tokens = await exchangeCode(config, flow, callback)
  return { flow, tessera, tokens }
}

/** The OAuth `error` a rejected client call carried, or null when it succeeded. */
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { error?: string }) => e.error ?? String(e),
  )

/** The logout token that arrives for `sid` within 5 seconds, verified with the JWKS alone. */
async function logoutTokenFor(sid: string) {
  const find = () => received.find((tk) => decodeJwt(tk).sid === sid)
  t.not(await waitFor(async () => find() !== undefined, 5000), -1, 'a logout token within 5 seconds')
  const token = find() ?? ''
  const { payload } = await jwtVerify(token, jwks, { issuer, audience: reg.clientId, algorithms: ['RS256'] })
  return payload
}

/** The form the logout page carries: where it posts, and its fields. */
function formOf(html: string) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? ''
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  )
  return { action: action.replace(/&#38;/g, '&'), fields: fields as Record<string, string> }
}

t.test('endOidcSession: with an id_token_hint the user is signed out at once, everywhere', async (t) => {
  const user = await createUser(app, tenant, { roles: ['user'] })
  const { flow, tessera, tokens } = await signedIn(user)
  const idToken = tokens.id_token ?? ''
  const sid = decodeJwt(idToken).sid as string
  t.ok(sid, 'the ID token carries sid')
  const url = client.buildEndSessionUrl(config, {
    id_token_hint: idToken,
    post_logout_redirect_uri: BYE,
    state: 'st-1',
  })
  const page = await flow.browser.fetch(url.href)
  t.equal(page.status, 200)
  const html = await page.text()
  t.match(html, /document\.forms\[0\]\.submit\(\)/, 'it posts itself: no question')
  t.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/)
  t.match(page.headers.get('content-security-policy') ?? '', /script-src 'sha256-/, 'only its own script')
  const { action, fields } = formOf(html)
  t.equal(fields.logout, 'yes')
  const confirm = await flow.browser.fetch(new URL(action, base).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
  t.equal(confirm.status, 303, 'never 307')
  t.equal(confirm.headers.get('location'), `${BYE}?state=st-1`, 'to the registered address, with state')
  const logout = await logoutTokenFor(sid)
  t.equal(logout.sub, user.id)
  t.ok(logout.jti && logout.iat)
  t.same(logout.events, { 'http://schemas.openid.net/event/backchannel-logout': {} })
  t.notOk('nonce' in logout, 'no nonce')
  t.same(await activeSessions(app, user), [], 'the Tessera session behind it ended')
  const refreshed = await call(app, 'refresh', null, { body: { refreshToken: tessera.refreshToken } })
  t.equal(refreshed.status, 401, "the Tessera session's refresh token is dead")
  t.equal(await errorOf(client.refreshTokenGrant(config, tokens.refresh_token ?? '')), 'invalid_grant')
})

t.test(
  'confirmOidcEndSession: without a hint the page asks first; a forged confirmation or a foreign redirect is refused',
  async (t) => {
    const user = await createUser(app, tenant, { roles: ['user'] })
    const { flow, tokens } = await signedIn(user)
    const ask = await flow.browser.fetch(`${issuer}/session/end`)
    t.equal(ask.status, 200)
    const html = await ask.text()
    t.match(html, /Yes, sign me out/)
    t.notMatch(html, /<script/, 'no script: the person decides')
    t.match(ask.headers.get('content-security-policy') ?? '', /script-src 'none'/)
    const stay = formOf(html)
    const kept = await flow.browser.fetch(new URL(stay.action, base).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(stay.fields).toString(),
    })
    t.equal(kept.status, 303, '"No" is an answer too')
    t.equal((await activeSessions(app, user)).length, 1, 'the Tessera session stays')
    const foreign = await flow.browser.fetch(
      client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: 'https://evil.test/bye',
      }).href,
    )
    t.equal(foreign.status, 400, 'an unregistered post_logout_redirect_uri')
    t.equal(foreign.headers.get('location'), null, 'redirects nowhere')
    const forged = await flow.browser.fetch(
      `${issuer}/session/end?id_token_hint=${tokens.id_token?.slice(0, -4)}AAAA&post_logout_redirect_uri=${BYE}`,
    )
    t.equal(forged.status, 400, 'a forged id_token_hint')
    const replay = await flow.browser.fetch(`${issuer}/session/end/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'xsrf=made-up&logout=yes',
    })
    t.equal(replay.status, 400, 'a confirmation without the page’s anti-forgery value')
    t.equal((await activeSessions(app, user)).length, 1, 'still signed in')
  },
)

t.test('getOidcLogoutSuccess: the page a logout without an address ends on', async (t) => {
  const res = await fetch(`${issuer}/session/end/success?client_id=${reg.clientId}`)
  t.equal(res.status, 200)
  t.match(await res.text(), /signed out from Test app/)
  const unknown = await fetch(`${issuer}/session/end/success?client_id=nope`)
  t.equal(unknown.status, 400)
})

t.test('back-channel logout: a Tessera logout ends the provider session and tells the client', async (t) => {
  const user = await createUser(app, tenant, { roles: ['user'] })
  const { tessera, tokens } = await signedIn(user)
  const sid = decodeJwt(tokens.id_token ?? '').sid as string
  const out = await logoutWith(app, tessera.accessToken, tessera.refreshToken)
  t.equal(out.status, 200)
  const logout = await logoutTokenFor(sid)
  t.equal(logout.sub, user.id)
  t.equal(await errorOf(client.refreshTokenGrant(config, tokens.refresh_token ?? '')), 'invalid_grant')
  const intro = await client.tokenIntrospection(config, tokens.access_token)
  t.equal(intro.active, false, 'its access token introspects inactive')
})

t.test('back-channel logout: a deactivation ends every provider session of the user', async (t) => {
  const user = await createUser(app, tenant, { roles: ['user'] })
  const { tokens } = await signedIn(user)
  const sid = decodeJwt(tokens.id_token ?? '').sid as string
  const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
  const res = await call(app, 'updateUser', cred, {
    params: { userId: user.id },
    body: { status: 'INACTIVE' },
  })
  t.equal(res.status, 200)
  t.equal((await logoutTokenFor(sid)).sub, user.id)
  t.equal(await errorOf(client.refreshTokenGrant(config, tokens.refresh_token ?? '')), 'invalid_grant')
})
