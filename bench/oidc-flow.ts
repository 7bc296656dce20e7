// The browser's and the client's part of an OpenID code flow, played over HTTP without a browser (as
// test/helpers/oidc.ts does), for the OpenID provider rows of `make bench` (bench/oidc.ts): a cookie jar, the
// authorization request, the redirects, and the minting of authorization codes from a signed-in session.
import { createHash, randomBytes } from 'node:crypto'

/** One provider under test, as its client sees it (the service, the bare library, Better Auth). */
export interface OidcTarget {
  label: string
  /** http://127.0.0.1:port: every request goes here (Location headers are followed on this origin). */
  origin: string
  paths: { authorize: string; token: string; userinfo: string; introspection: string }
  clientId: string
  clientSecret: string
  redirectUri: string
  scope: string
  /** Extra parameters of the authorization request. */
  authorizeParams?: Record<string, string>
  /** The server's process id, for its CPU; undefined when it is this process. */
  pid?: number
  /** How the target's introspection is asked (Better Auth's names the hint). */
  introspectionExtra?: Record<string, string>
}

/** The bare library's one static client (bench/oidc-ceiling.ts). */
export const CEILING_CLIENT = {
  client_id: 'bench-ceiling-client',
  client_secret: 'bench-ceiling-secret-0123456789abcdef',
  redirect_uris: ['http://127.0.0.1:9/cb'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: 'openid profile email offline_access',
} as const

/** PKCE: one verifier for every authorization of a run (each code still has its own exchange). */
export const VERIFIER = randomBytes(32).toString('base64url')
export const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')

export const basic = (t: OidcTarget) =>
  `Basic ${Buffer.from(`${encodeURIComponent(t.clientId)}:${encodeURIComponent(t.clientSecret)}`).toString('base64')}`

/** A browser: cookies kept by name, redirects not followed. */
export class Browser {
  private readonly jar = new Map<string, string>()

  constructor(private readonly origin: string) {}

  /** GET (or another method) `url` (absolute, or a path on the origin) with the browser's cookies. */
  async fetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await fetch(new URL(url, this.origin), {
      ...init,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const i = pair.indexOf('=')
      const name = pair.slice(0, i)
      const value = pair.slice(i + 1)
      if (/expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line) || value === '')
        this.jar.delete(name)
      else this.jar.set(name, value)
    }
    return res
  }

  /** The cookie header the browser would send (for a client outside fetch). */
  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  /** Sets a cookie by hand (a session the peer's API handed out). */
  set(name: string, value: string): void {
    this.jar.set(name, value)
  }
}

/** The authorization request's URL (a fresh state and nonce each time). */
export function authorizeUrl(t: OidcTarget): string {
  const q = new URLSearchParams({
    client_id: t.clientId,
    response_type: 'code',
    redirect_uri: t.redirectUri,
    scope: t.scope,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('base64url'),
    nonce: randomBytes(8).toString('base64url'),
    ...t.authorizeParams,
  })
  return `${t.paths.authorize}?${q}`
}

/** Follows redirects in the browser until one reaches the client's callback or an interaction page. */
export async function follow(b: Browser, t: OidcTarget, url: string): Promise<URL> {
  let next = url
  for (let i = 0; i < 10; i++) {
    const res = await b.fetch(next)
    // Why a JSON answer too: Better Auth answers a request fetch() makes (sec-fetch-mode: cors) with
    // `{ redirect: true, url }` where it answers a navigation with a 302.
    const text = res.headers.get('location') ? '' : await res.text()
    const location = res.headers.get('location') ?? redirectIn(text)
    if (!location) throw new Error(`${t.label}: no redirect from ${next}: ${res.status} ${text}`)
    const target = new URL(location, new URL(next, t.origin))
    if (target.href.startsWith(t.redirectUri)) return target
    if (/\/(interaction|consent|sign-in|login)\b/.test(target.pathname)) return target
    next = target.pathname + target.search
  }
  throw new Error(`${t.label}: too many redirects`)
}

function redirectIn(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { redirect?: unknown; url?: unknown }
    return body.redirect === true && typeof body.url === 'string' ? body.url : undefined
  } catch {
    return undefined
  }
}

/** The code of a callback URL (an error there fails). */
export function codeOf(t: OidcTarget, callback: URL): string {
  const code = callback.searchParams.get('code')
  if (!callback.href.startsWith(t.redirectUri) || !code)
    throw new Error(`${t.label}: the authorization ended at ${callback.href}, not with a code`)
  return code
}

/**
 * Authorization codes from signed-in browsers (one session and one grant each): authorization requests, each
 * answered with a redirect to the callback and its code, the browsers in parallel, until `count` codes or
 * `seconds` have passed. Returns the codes and the rate they were minted at (all browsers together).
 */
export async function mintCodes(
  t: OidcTarget,
  browsers: Browser[],
  count: number,
  seconds: number,
): Promise<{ codes: string[]; perSecond: number }> {
  const codes: string[] = []
  const started = performance.now()
  const deadline = started + seconds * 1000
  let asked = 0
  await Promise.all(
    browsers.map(async (b) => {
      while (asked < count && performance.now() < deadline) {
        asked++
        codes.push(codeOf(t, await follow(b, t, authorizeUrl(t))))
      }
    }),
  )
  return { codes, perSecond: codes.length / ((performance.now() - started) / 1000) }
}

/** The body of a token request (form-encoded). */
export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** The tokens of a code (the seeding's exchange, outside the measured runs). */
export async function exchange(t: OidcTarget, code: string) {
  const res = await fetch(new URL(t.paths.token, t.origin), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(t) },
    body: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: t.redirectUri,
      code_verifier: VERIFIER,
    }),
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${t.label}: code exchange answered ${res.status} ${text}`)
  const body = JSON.parse(text) as { access_token?: string; refresh_token?: string; id_token?: string }
  if (!body.access_token || !body.refresh_token)
    throw new Error(`${t.label}: code exchange gave no access or refresh token: ${text}`)
  return { accessToken: body.access_token, refreshToken: body.refresh_token }
}
