// An upstream identity provider for the federation tests (contract section 24): panva's oidc-provider on a
// loopback port with its in-memory adapter, PKCE required, one confidential client that the tenant under
// test registers, and a scripted interaction: the person in `upstream.person` signs in and consents at once.
// A real provider, not a mock of our own.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
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
  } as Upstream
  const provider = new Provider(issuer, {
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
    else void handle(req, res)
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
