// The bare library's ceiling for the OpenID provider rows of `make bench` (bench/oidc.ts): a plain oidc-provider,
// the version in node_modules, with its default in-memory adapter and one static confidential client, on plain
// node:http, configured as src/modules/oidc/library.ts configures a tenant's provider where that does not need
// the service (the same routes, scopes, claims, PKCE, RS256, opaque access tokens, refresh rotation, TTLs,
// introspection policy). An account's claims are fixed; the interaction signs the browser in on its first visit
// and the grant is made there, as the service's consent makes it. Run as its own process:
//   node --import tsx bench/oidc-ceiling.ts   (PORT, default 3919; prints one JSON line when listening)
import { createServer } from 'node:http'
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider'
import { CEILING_CLIENT } from './oidc-flow.js'

// The library's own in-memory adapter (the one it uses when given none), its store made large enough to evict
// nothing during a run: by default each provider gets an LRU of 1,000 entries, which a run at thousands of
// tokens a second outgrows in a second, dropping the grants, sessions and tokens the workloads reuse.
type Memory = { default: new (model: string, store: unknown, clockTolerance: number) => object }
type Lru = { default: new (o: { maxSize: number }) => unknown }
const { default: MemoryAdapter } = (await import(
  'oidc-provider/lib/adapters/memory_adapter.js' as string
)) as Memory
const { default: LRU } = (await import('oidc-provider/lib/helpers/lru.js' as string)) as Lru
const store = new LRU({ maxSize: 10_000_000 })

const port = Number(process.env.PORT ?? 3919)
const issuer = `http://127.0.0.1:${port}`
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'ceiling', alg: 'RS256', use: 'sig' }
const HOUR = 3600

/** Fixed claims of the shape the service's findAccount gives (section 23). */
const claimsOf = (sub: string) => ({
  sub,
  email: `${sub}@example.test`,
  email_verified: true,
  preferred_username: sub,
  updated_at: 1_700_000_000,
  roles: ['user'],
  permissions: [],
})

const configuration: Configuration = {
  adapter: (model: string) => new MemoryAdapter(model, store, 0) as never,
  clients: [{ ...CEILING_CLIENT, redirect_uris: [...CEILING_CLIENT.redirect_uris] } as never],
  jwks: { keys: [jwk as never] },
  findAccount: (_c, sub) => ({ accountId: sub, claims: async () => claimsOf(sub) }),
  claims: {
    openid: ['sub', 'auth_time', 'amr', 'acr', 'sid'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'updated_at'],
    roles: ['roles', 'permissions'],
  },
  scopes: ['openid', 'offline_access', 'profile', 'email', 'roles'],
  conformIdTokenClaims: false,
  responseTypes: ['code'],
  pkce: { required: () => true },
  clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
  features: {
    devInteractions: { enabled: false },
    introspection: {
      enabled: true,
      allowedPolicy: async (_c, client, token) =>
        token.clientId === undefined || token.clientId === client.clientId,
    },
    revocation: { enabled: true },
    userinfo: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    backchannelLogout: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: { enabled: true },
  },
  interactions: { url: (_c, interaction) => `/interaction/${interaction.uid}` },
  cookies: {
    keys: ['bench-ceiling-cookie-key'],
    long: { httpOnly: true, sameSite: 'lax', signed: true },
    short: { httpOnly: true, sameSite: 'lax', signed: true },
  },
  ttl: {
    AccessToken: 900,
    AuthorizationCode: 60,
    IdToken: 900,
    Interaction: 600,
    RefreshToken: 30 * 24 * HOUR,
    Grant: 30 * 24 * HOUR,
    Session: 30 * 24 * HOUR,
  },
  rotateRefreshToken: true,
  issueRefreshToken: async (c, client, code) => {
    if (!client.grantTypeAllowed('refresh_token')) return false
    if (code.scopes.has('offline_access')) return true
    const grant = code.grantId ? await c.oidc.provider.Grant.find(code.grantId) : undefined
    return Boolean(grant?.getOIDCScope().split(' ').includes('offline_access'))
  },
  // As the service: the grant the session already holds for the client (made at the first visit below).
  loadExistingGrant: async (c) => {
    const grantId =
      (c.oidc.result?.consent as { grantId?: string } | undefined)?.grantId ??
      (c.oidc.client ? c.oidc.session?.grantIdFor(c.oidc.client.clientId) : undefined)
    return grantId ? c.oidc.provider.Grant.find(grantId) : undefined
  },
  routes: {
    authorization: '/auth',
    token: '/token',
    userinfo: '/me',
    introspection: '/token/introspection',
    revocation: '/token/revocation',
    end_session: '/session/end',
    jwks: '/.well-known/jwks.json',
  },
}

const provider = new Provider(issuer, configuration)
const callback = provider.callback()

/** The interaction: the first visit signs a new account in and grants what the client asked (the consent). */
async function interact(req: Parameters<typeof callback>[0], res: Parameters<typeof callback>[1]) {
  const details = await provider.interactionDetails(req, res)
  const params = details.params as { client_id: string; scope: string }
  const accountId = details.session?.accountId ?? `ceiling-${randomUUID()}`
  const grant = new provider.Grant({ accountId, clientId: params.client_id })
  // Why offline_access added: the library drops it from a request without prompt=consent; the service's consent
  // records it in the grant all the same (routes.ts's tessera_offline), and so does this one.
  grant.addOIDCScope(`${params.scope} offline_access`)
  const grantId = await grant.save()
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  )
}

const server = createServer((req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    interact(req, res).catch((err: unknown) => {
      res.statusCode = 500
      res.end(String(err))
    })
    return
  }
  void callback(req, res)
})
provider.on('server_error', (_c: KoaContextWithOIDC, err: Error) => console.error(err))
server.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ listening: issuer, pid: process.pid })))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
