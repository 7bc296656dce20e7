// A small GitHub-like OAuth 2.0 server for the federation tests (contract section 24, kind `oauth2`): an
// authorize step that signs `person` in at once, a token endpoint that checks the client's secret, the
// redirect URI and the PKCE S256 verifier and answers JSON, and a `/user` endpoint shaped like GitHub's
// (numeric `id`, `login`, `email`, no verified-email claim). No ID token, no discovery.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestLike } from './app.js'
import type { UpstreamPerson } from './upstream.js'

/** A running GitHub-like server: its endpoints, the client the tenant holds there, and who signs in next. */
export interface OAuth2Upstream {
  base: string
  clientId: string
  clientSecret: string
  person: UpstreamPerson
  /** The token requests it has taken, as sent (to assert the service's PKCE and client authentication). */
  tokenRequests: URLSearchParams[]
}

async function bodyOf(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return new URLSearchParams(Buffer.concat(chunks).toString())
}

/** Starts the server on 127.0.0.1, closed in teardown. */
export async function startOAuth2Upstream(t: TestLike): Promise<OAuth2Upstream> {
  const codes = new Map<string, { challenge: string; redirectUri: string; person: UpstreamPerson }>()
  const tokens = new Map<string, UpstreamPerson>()
  const up: OAuth2Upstream = {
    base: '',
    clientId: 'gh-client',
    clientSecret: 'gh-secret-0123456789abcdef',
    person: { sub: '4242', email: 'octo@acme.test', preferred_username: 'octo' },
    tokenRequests: [],
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', up.base)
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const redirect = new URL(url.searchParams.get('redirect_uri') ?? '')
      const code = randomBytes(16).toString('hex')
      codes.set(code, {
        challenge: url.searchParams.get('code_challenge') ?? '',
        redirectUri: redirect.href,
        person: { ...up.person },
      })
      redirect.searchParams.set('code', code)
      redirect.searchParams.set('state', url.searchParams.get('state') ?? '')
      res.writeHead(302, { location: redirect.href })
      res.end()
      return
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      void bodyOf(req).then((form) => {
        up.tokenRequests.push(form)
        const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
          .toString()
          .split(':')
          .map(decodeURIComponent)
        const [id, secret] = form.get('client_secret')
          ? [form.get('client_id'), form.get('client_secret')]
          : basic
        const grant = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        const verifier = form.get('code_verifier') ?? ''
        if (id !== up.clientId || secret !== up.clientSecret) return json(401, { error: 'invalid_client' })
        if (
          !grant ||
          grant.redirectUri !== form.get('redirect_uri') ||
          createHash('sha256').update(verifier).digest('base64url') !== grant.challenge
        )
          return json(400, { error: 'invalid_grant' })
        const token = randomBytes(16).toString('hex')
        tokens.set(token, grant.person)
        json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
      })
      return
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      const person = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''))
      if (!person) return json(401, { message: 'Bad credentials' })
      return json(200, {
        id: Number(person.sub),
        login: person.preferred_username,
        email: person.email ?? null,
      })
    }
    json(404, { message: 'Not Found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  up.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return up
}
