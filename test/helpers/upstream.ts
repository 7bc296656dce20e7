// An upstream identity provider for the federation tests (contract section 24): panva's oidc-provider on a
// loopback port with its in-memory adapter, PKCE required, and one confidential client that the tenant under
// test registers. A real provider, not a mock of our own.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import type { TestLike } from './app.js'

/** A running upstream: its issuer and the client the tenant holds at it. */
export interface Upstream {
  issuer: string
  clientId: string
  clientSecret: string
  provider: Provider
}

/**
 * Starts an upstream provider on 127.0.0.1; `host` names it in its issuer (`localhost` makes an issuer that
 * differs from the 127.0.0.1 address a test may give). Closed in teardown.
 */
export async function startUpstream(
  t: TestLike,
  opts: { redirectUris?: string[]; host?: string } = {},
): Promise<Upstream> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const issuer = `http://${opts.host ?? '127.0.0.1'}:${port}`
  const clientId = 'tessera-at-upstream'
  const clientSecret = 'upstream-secret-0123456789abcdef'
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris ?? ['http://127.0.0.1:9/cb'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
  })
  const handle = provider.callback()
  server.on('request', (req, res) => void handle(req, res))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { issuer, clientId, clientSecret, provider }
}
