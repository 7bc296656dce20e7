// The OpenID provider's tests (contract section 23): a listening service whose PUBLIC_URL is its own address,
// a real client (`openid-client`) against it, and a browser's part of the code flow (cookies, redirects)
// played by fetch, as the sign-in page would.
import { createServer } from 'node:net'
import * as client from 'openid-client'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, type TestApp, type TestLike } from './app.js'
import { call } from './call.js'
import { createUser, tokenFor, type TenantFx, type UserFx } from './fixtures.js'
import type { BodyOf } from './call.js'

/** A free loopback port (the service's PUBLIC_URL must name it before the app is built). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0))
    })
  })
}

/**
 * A listening test app whose PUBLIC_URL is `base`, on 127.0.0.1; `host` names it in the URL (`localhost`
 * for WebAuthn, which needs a domain).
 */
export async function listeningApp(t: TestLike, env: Record<string, string> = {}, host = '127.0.0.1') {
  const port = await freePort()
  const base = `http://${host}:${port}`
  const app = await buildTestApp(t, { PUBLIC_URL: base, ...env })
  await app.listen({ port, host: '127.0.0.1' })
  return { app, base }
}

/** Registers an OAuth client through the API as a fresh admin of the tenant. */
export async function registerClient(
  app: FastifyInstance,
  tenant: TenantFx,
  body: Partial<BodyOf<'createOAuthClient'>> = {},
) {
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const res = await call(
    app,
    'createOAuthClient',
    { token: await tokenFor(app, admin) },
    {
      body: { name: 'Test app', type: 'confidential', redirectUris: ['http://127.0.0.1:9/cb'], ...body },
    },
  )
  if (res.status !== 201) throw new Error(`createOAuthClient: ${res.status} ${res.raw}`)
  return res.data
}

/** The client's view of the provider: openid-client's configuration from the issuer's discovery. */
export async function discover(base: string, tenant: TenantFx, clientId: string, secret?: string | null) {
  return client.discovery(
    new URL(`${base}/t/${tenant.code}`),
    clientId,
    secret ? { client_secret: secret } : undefined,
    secret ? undefined : client.None(),
    { execute: [client.allowInsecureRequests] },
  )
}

/** A browser: cookies kept by name, redirects not followed. */
export class Browser {
  private readonly jar = new Map<string, string>()

  /** GET (or POST with JSON) `url` with the browser's cookies; keeps what it sets. */
  async fetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const i = pair.indexOf('=')
      const name = pair.slice(0, i)
      const value = pair.slice(i + 1)
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.jar.delete(name)
      else this.jar.set(name, value)
    }
    return res
  }

  /** The names of the cookies held. */
  cookies(): string[] {
    return [...this.jar.keys()]
  }
}

/** The checks a client keeps for one authorization request. */
export interface FlowChecks {
  verifier: string
  state: string
  nonce: string
}

/** What a code flow started: the interaction's address and the checks the client keeps. */
export interface Started extends FlowChecks {
  browser: Browser
  interactionUrl: string
  uid: string
}

/**
 * Opens an authorization request, built by any client library, in a browser: the answer must send it to
 * the sign-in page, whose address (with the client's checks) is returned.
 */
export async function openAuthorization(
  base: string,
  url: URL,
  checks: FlowChecks,
  browser = new Browser(),
): Promise<Started> {
  const res = await browser.fetch(url.href)
  const location = res.headers.get('location') ?? ''
  const uid = /\/interaction\/([^/?]+)/.exec(location)?.[1]
  if (!uid) throw new Error(`authorization answered ${res.status} ${location} ${await res.text()}`)
  return { browser, interactionUrl: new URL(location, base).href, uid, ...checks }
}

/** Starts the code flow in a browser: the authorization request, answered with the sign-in page's address. */
export async function startFlow(
  base: string,
  config: client.Configuration,
  params: Record<string, string> = {},
  browser = new Browser(),
): Promise<Started> {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1:9/cb',
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  })
  return openAuthorization(base, url, { verifier, state, nonce }, browser)
}

/** Posts to an interaction operation as the page does (the browser's cookies, a bearer when given). */
export async function interact(
  s: Started,
  step: 'login' | 'consent' | 'abort' | 'details',
  token?: string,
  body?: object,
) {
  const res = await s.browser.fetch(`${s.interactionUrl}/${step}`, {
    method: step === 'details' ? 'GET' : 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  const json = (await res.json()) as { data?: { redirectTo?: string }; code?: string }
  return { status: res.status, json }
}

/** Follows the provider's redirects in the browser until one leaves it (the client's callback, or a page). */
export async function follow(s: Started, url: string): Promise<URL> {
  let next = url
  for (let i = 0; i < 10; i++) {
    const res = await s.browser.fetch(next)
    const location = res.headers.get('location')
    if (!location) throw new Error(`no redirect from ${next}: ${res.status} ${await res.text()}`)
    const target = new URL(location, next)
    if (!target.pathname.startsWith('/t/') || target.pathname.includes('/interaction/')) return target
    next = target.href
  }
  throw new Error('too many redirects')
}

/** Signs a user in through the interaction (and consents when asked): the client's callback URL. */
export async function signIn(app: TestApp, s: Started, user: UserFx, consent = true): Promise<URL> {
  const token = await tokenFor(app, user)
  const login = await interact(s, 'login', token)
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.json)}`)
  const after = await follow(s, login.json.data?.redirectTo ?? '')
  if (!after.pathname.includes('/interaction/')) return after
  if (!consent) return after
  const again = { ...s, interactionUrl: after.href }
  const answer = await interact(again, 'consent', token, { approve: true })
  if (answer.status !== 200) throw new Error(`consent: ${answer.status} ${JSON.stringify(answer.json)}`)
  return follow(s, answer.json.data?.redirectTo ?? '')
}

/** The code exchange a client makes at its callback, with the flow's checks (and `resource` or others). */
export function exchangeCode(
  config: client.Configuration,
  s: Started,
  callback: URL,
  params?: Record<string, string>,
) {
  return client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce },
    params,
  )
}

export { client }
