// An upstream identity provider for the federation tests (contract section 24): panva's oidc-provider on a
// loopback port with its in-memory adapter, PKCE required, one confidential client that the tenant under
// test registers, and a scripted interaction: the person in `upstream.person` signs in and consents at once.
// A real provider, not a mock of our own.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type JWTPayload } from 'jose'
import Provider from 'oidc-provider'
import type { TestLike } from './app.js'

/** Who signs in at the upstream: its claims as the provider gives them. */
export interface UpstreamPerson {
  sub: string
  email?: string
  email_verified?: boolean
  preferred_username?: string
}

/** A running upstream: its issuer, the client the tenant holds at it, and who signs in next. */
export interface Upstream {
  issuer: string
  clientId: string
  clientSecret: string
  provider: Provider
  person: UpstreamPerson
  /**
   * When set, rewrites the ID token of the next token responses: its claims changed, re-signed with the
   * upstream's own key (or with another key under the same `kid`): an ID token the relying party must refuse.
   */
  tamper?: { claims?: (c: JWTPayload) => JWTPayload; foreignKey?: boolean }
  /** The `Cache-Control` its discovery document is sent with (none when unset). */
  discoveryCacheControl?: string
  /** How many times its discovery document was read. */
  discoveryReads: number
  /** Stops it now (a provider that stopped answering); teardown does it otherwise. */
  close: () => Promise<void>
}

/** Finishes an interaction as the scripted person: the sign-in, then a consent to what was asked. */
async function interact(provider: Provider, up: Upstream, req: IncomingMessage, res: ServerResponse) {
  const details = await provider.interactionDetails(req, res)
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: up.person.sub } })
    return
  }
  const grant = new provider.Grant({ accountId: up.person.sub, clientId: String(details.params.client_id) })
  grant.addOIDCScope(String(details.params.scope))
  await provider.interactionFinished(
    req,
    res,
    { consent: { grantId: await grant.save() } },
    { mergeWithLastSubmission: true },
  )
}

/** Holds back a response's body and sends `rewrite`'s version of it, its length set anew. */
function rewriteBody(res: ServerResponse, rewrite: (body: string) => Promise<string>) {
  const end = res.end.bind(res)
  const chunks: Buffer[] = []
  const write = (chunk: unknown) => {
    if (chunk) chunks.push(Buffer.from(chunk as string))
    return true
  }
  res.write = write as ServerResponse['write']
  res.end = ((chunk?: unknown) => {
    write(chunk)
    void rewrite(Buffer.concat(chunks).toString()).then((body) => {
      res.setHeader('content-length', Buffer.byteLength(body))
      end(body)
    })
    return res
  }) as ServerResponse['end']
}

/**
 * Starts an upstream provider on 127.0.0.1; `host` names it in its issuer (`localhost` makes an issuer that
 * differs from the 127.0.0.1 address a test may give). Closed in teardown.
 */
export async function startUpstream(
  t: TestLike,
  opts: { redirectUris?: string[]; host?: string; person?: UpstreamPerson } = {},
): Promise<Upstream> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const issuer = `http://${opts.host ?? '127.0.0.1'}:${port}`
  const up = {
    issuer,
    clientId: 'tessera-at-upstream',
    clientSecret: 'upstream-secret-0123456789abcdef',
    person: opts.person ?? { sub: 'upstream-person-1', email: 'person@acme.test', email_verified: true },
    discoveryReads: 0,
  } as Upstream
  // Why the key is the test's own: a tampered ID token is re-signed with it, and so still verifies by the JWKS.
  const kid = 'upstream-key-1'
  const own = await generateKeyPair('RS256', { extractable: true })
  const foreign = await generateKeyPair('RS256')
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(own.privateKey)), kid, alg: 'RS256', use: 'sig' }] },
    clients: [
      {
        client_id: up.clientId,
        client_secret: up.clientSecret,
        redirect_uris: opts.redirectUris ?? ['http://127.0.0.1:9/cb'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ ...up.person, sub }) }),
  })
  up.provider = provider
  const handle = provider.callback()
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) void interact(provider, up, req, res).catch(() => res.end())
    else {
      if (req.url === '/.well-known/openid-configuration') {
        up.discoveryReads++
        if (up.discoveryCacheControl) res.setHeader('cache-control', up.discoveryCacheControl)
      }
      if (req.method === 'POST' && req.url === '/token' && up.tamper) {
        const { claims = (c: JWTPayload) => c, foreignKey = false } = up.tamper
        rewriteBody(res, async (body) => {
          const json = JSON.parse(body) as { id_token?: string }
          if (!json.id_token) return body
          json.id_token = await new SignJWT(claims(decodeJwt(json.id_token)))
            .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
            .sign(foreignKey ? foreign.privateKey : own.privateKey)
          return JSON.stringify(json)
        })
      }
      void handle(req, res)
    }
  })
  up.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
      if (!server.listening) resolve()
    })
  t.teardown(() => up.close())
  return up
}
