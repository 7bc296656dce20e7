import { createHash, randomBytes } from 'node:crypto'
import { call } from './call.js'
import { Browser } from './oidc.js'
import type { TestApp } from './app.js'
import type { TenantFx } from './fixtures.js'
import type { Upstream } from './upstream.js'

/** A page's PKCE pair. */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** What a federated flow in a test works against: a listening service, its tenant, an upstream, an admin. */
export interface FederationSetup {
  app: TestApp
  base: string
  tenant: TenantFx
  admin: { token: string }
  returnTo: string
}

/** The options of one run of the flow. */
export interface FederateOptions {
  returnTo?: string
  person?: Upstream['person']
  atCallback?: Browser
  tamperState?: boolean
  /** More authorize parameters (`intent`, `link_token`). */
  query?: Record<string, string>
}

/** The helpers of a federation test: a provider at the upstream, the browser's flow, the page's login. */
export function federationKit(s: FederationSetup, upstream: Upstream) {
  const callback = `${s.base}/t/${s.tenant.code}/federation/callback`
  return {
    callback,
    /** A provider of the tenant at the upstream, with these settings. */
    async addProvider(settings: Record<string, unknown> = {}) {
      const res = await call(s.app, 'createIdentityProvider', s.admin, {
        body: {
          name: 'Upstream',
          kind: 'oidc',
          issuer: upstream.issuer,
          clientId: upstream.clientId,
          clientSecret: upstream.clientSecret,
          ...settings,
        },
      })
      if (res.status !== 201) throw new Error(res.raw)
      return res.data
    },
    /**
     * Runs the flow in a browser as the upstream's current person: authorize, the upstream's redirects, the
     * callback (in `atCallback`, another browser when given), then the fragment of the address it ended at.
     */
    async federate(up: Pick<Upstream, 'person'>, providerId: string, opts: FederateOptions = {}) {
      if (opts.person) up.person = opts.person
      const returnTo = opts.returnTo ?? s.returnTo
      const browser = new Browser()
      const { verifier, challenge } = pkce()
      const q = new URLSearchParams({
        return_to: returnTo,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...opts.query,
      })
      let res = await browser.fetch(`${s.base}/t/${s.tenant.code}/federation/${providerId}/authorize?${q}`)
      if (res.status !== 302) return { status: res.status, body: await res.text(), verifier }
      let next = new URL(res.headers.get('location') ?? '')
      for (let i = 0; i < 12; i++) {
        if (next.href.startsWith(returnTo))
          return { status: 302, fragment: new URLSearchParams(next.hash.slice(1)), verifier }
        const atCallback = next.href.startsWith(callback)
        if (atCallback && opts.tamperState) next.searchParams.set('state', 'tampered')
        res = await (atCallback && opts.atCallback ? opts.atCallback : browser).fetch(next.href)
        const location = res.headers.get('location')
        if (!location) return { status: res.status, body: await res.text(), verifier }
        next = new URL(location, next)
      }
      throw new Error('too many redirects')
    },
    /** POST /login/federated with the flow's code and verifier. */
    login(code: string | null, verifier: string) {
      return call(
        s.app,
        'loginFederated',
        {},
        { body: { tenantCode: s.tenant.code, code: code ?? 'x', codeVerifier: verifier } },
      )
    },
  }
}
