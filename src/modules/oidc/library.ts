import { createHmac } from 'node:crypto'
import { exportJWK } from 'jose'
import type Provider from 'oidc-provider'
import type { Configuration, errors as LibraryErrors } from 'oidc-provider'
import type { AppContext, TenantInfo } from '../../context.js'
import type { OAuthResource } from '../../security/auth-config.js'
import { outboundFetch as guardedFetch } from '../../lib/outbound.js'
import { sha256Hex, timingSafeEqualStr } from '../../lib/tokens.js'
import { resourceOf } from '../oauth-clients/resources.js'
import { loadUserWithGrants } from '../permissions/grant-queries.js'
import { userAndGrants, type GrantRow, type UserJson } from '../../security/grants.js'
import { adapterFor } from './adapter.js'
import { EXTRA_CLIENT_METADATA, OIDC_SCOPES } from './client-metadata.js'
import { renderLoggedOut, renderLogout, type LogoutPageContext } from './logout-pages.js'
import { endTesseraSession } from './session-binding.js'

// Every import of `oidc-provider` is here (ARCHITECTURE.md, "Where the sign-in protocols go"): the one
// Provider per tenant and its configuration (contract section 23; ../shared/notes/oidc-provider.md says why
// each setting). The library is used unforked; where its defaults are looser than the contract, the
// configuration wins.

export type { Provider }

/** The provider's routes under the issuer `{PUBLIC_URL}/t/{tenantCode}` (the document lists each). */
export const OIDC_ROUTES = {
  authorization: '/auth',
  token: '/token',
  userinfo: '/me',
  introspection: '/token/introspection',
  revocation: '/token/revocation',
  end_session: '/session/end',
  jwks: '/.well-known/jwks.json',
  registration: '/reg',
} as const

const INTERACTION_TTL_S = 600
const CODE_TTL_S = 60

/** A cookie-signing key of the tenant's own, derived from SECRETS_KEY (kept across restarts and instances). */
function cookieKey(ctx: AppContext, tenantId: string): string {
  return createHmac('sha256', ctx.secretsKey).update(`oidc-cookies:${tenantId}`).digest('base64url')
}

/**
 * The claims of a user as section 23 lists them; the library keeps those of the granted scopes. The user and
 * grant rows come from the request's token lookup when it read them (adapter.ts), else from one query.
 */
async function findAccount(
  ctx: AppContext,
  tenant: TenantInfo,
  sub: string,
  prefetched: (accountId: string) => GrantRow[] | undefined,
) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sub)) return undefined
  const isPlatform = tenant.code === ctx.config.platformTenantCode
  const rows = prefetched(sub)
  const { user, grants } = rows
    ? userAndGrants<UserJson>(rows, isPlatform)
    : await loadUserWithGrants(ctx.dbs.forTenant(tenant.id), tenant.id, sub, isPlatform)
  // Why undefined for a user who is not ACTIVE: the library then refuses the refresh (invalid_grant),
  // introspects the token as inactive and answers userinfo with invalid_token.
  if (!user || user.status !== 'ACTIVE') return undefined
  return {
    accountId: sub,
    claims: async () => ({
      sub,
      email: user.email ?? undefined,
      email_verified: user.email ? user.email_verified : undefined,
      preferred_username: user.username ?? undefined,
      updated_at: Math.floor(Date.parse(user.updated_at) / 1000),
      roles: grants.roles,
      permissions: grants.permissions,
    }),
  }
}

/** The library's client authentication by secret, against the stored hash (and a rotation's former one). */
function compareClientSecret(this: { clientSecret?: string; [k: string]: unknown }, actual: string): boolean {
  const hash = sha256Hex(actual)
  // Why both compared every time: the time taken does not tell which secret matched.
  const current = timingSafeEqualStr(this.clientSecret ?? '', hash)
  const until = Number(this.tessera_previous_secret_until ?? 0)
  const previous =
    typeof this.tessera_previous_secret_hash === 'string' &&
    timingSafeEqualStr(this.tessera_previous_secret_hash, hash) &&
    until > Date.now()
  return current || previous
}

type Errors = typeof LibraryErrors

/** The tenant's resources (RFC 8707) as the library's resource servers: JWT access tokens (RFC 9068), RS256. */
function resourceIndicators(tenant: TenantInfo, errors: Errors) {
  const cfg = tenant.authConfig
  return {
    enabled: true as const,
    getResourceServerInfo: async (_c: unknown, indicator: string, client: MetadataOf) => {
      const r = resourceOf(cfg.oauth, indicator) ?? throwError(new errors.InvalidTarget())
      return {
        // Section 23: a resource's scope is granted only to a client that was given it.
        scope: resourceScopesFor(r, client).join(' '),
        audience: r.indicator,
        accessTokenTTL: r.accessTokenTtl ?? cfg.accessTokenExpiresIn,
        accessTokenFormat: 'jwt' as const,
        jwt: { sign: { alg: 'RS256' as const } },
      }
    },
  }
}

type MetadataOf = { metadata(): Record<string, unknown> }

/** The resource's scopes that this client was given (its `tessera_scopes`, client-metadata.ts). */
function resourceScopesFor(r: OAuthResource, client: MetadataOf): string[] {
  const given = client.metadata().tessera_scopes
  const allowed = new Set(Array.isArray(given) ? given : [])
  return r.scopes.filter((s) => allowed.has(s))
}

function throwError(e: Error): never {
  throw e
}

/** The adapter and what goes with it (adapter.ts). */
type Storage = ReturnType<typeof adapterFor>

/** The configuration of one tenant's provider. */
async function configurationOf(
  ctx: AppContext,
  tenant: TenantInfo,
  errors: Errors,
  storage: Storage,
): Promise<Configuration> {
  const keys = await ctx.keystore.oidcKeys(tenant.id)
  if (!keys.current) throw new Error(`tenant ${tenant.id} has no OpenID provider key`)
  const signing = {
    ...(await exportJWK(keys.current.privateKey)),
    kid: keys.current.kid,
    alg: 'RS256',
    use: 'sig',
  }
  const cfg = tenant.authConfig
  return {
    adapter: storage.Adapter,
    jwks: { keys: [signing] },
    findAccount: (_c, sub) => findAccount(ctx, tenant, sub, storage.takeAccount),
    claims: {
      openid: ['sub', 'auth_time', 'amr', 'acr', 'sid'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'updated_at'],
      roles: ['roles', 'permissions'],
    },
    scopes: [...OIDC_SCOPES],
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256'],
      userinfoSigningAlgValues: ['RS256'],
      introspectionSigningAlgValues: ['RS256'],
      authorizationSigningAlgValues: ['RS256'],
      requestObjectSigningAlgValues: ['RS256'],
      clientAuthSigningAlgValues: ['RS256'],
    },
    extraClientMetadata: { properties: [...EXTRA_CLIENT_METADATA] },
    extraParams: ['tessera_offline'],
    features: {
      devInteractions: { enabled: false },
      introspection: {
        enabled: true,
        // Section 23: a client learns about its own tokens only (another client's is `active: false`).
        allowedPolicy: async (_c, client, token) =>
          token.clientId === undefined || token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        // A client revokes its own tokens only; another client's is left alone, answered 200 as RFC 7009 answers
        // a token it does not know (the library's default would tell a confidential caller it exists).
        allowedPolicy: async (_c, client, token) =>
          token.clientId === undefined || token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (c, form) => renderLogout(c as unknown as LogoutPageContext, form),
        postLogoutSuccessSource: async (c) => renderLoggedOut(c as unknown as LogoutPageContext),
      },
      backchannelLogout: { enabled: true },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: resourceIndicators(tenant, errors),
      // Section 23: open to anyone while the tenant turns it on, for public clients (registration.ts).
      registration: cfg.oauth.dynamicRegistration
        ? { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false }
        : { enabled: false },
      requestObjects: { enabled: false },
    },
    interactions: {
      url: (_c, interaction) => `/t/${tenant.code}/interaction/${interaction.uid}`,
    },
    cookies: {
      keys: [cookieKey(ctx, tenant.id)],
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    ttl: {
      // A resource's own lifetime, where it has one (section 23, "Lifetimes").
      AccessToken: (_c, token) => token.resourceServer?.accessTokenTTL ?? cfg.accessTokenExpiresIn,
      ClientCredentials: (_c, token) => token.resourceServer?.accessTokenTTL ?? cfg.accessTokenExpiresIn,
      AuthorizationCode: CODE_TTL_S,
      IdToken: cfg.accessTokenExpiresIn,
      Interaction: INTERACTION_TTL_S,
      RefreshToken: cfg.refreshTokenExpiresIn,
      Grant: cfg.refreshTokenExpiresIn,
      Session: cfg.refreshTokenExpiresIn,
    },
    rotateRefreshToken: true,
    // Section 23: offline_access comes with the consent the page asks for (or a first-party client's
    // grant), not only with prompt=consent; the grant records it (interaction.ts).
    issueRefreshToken: async (c, client, code) => {
      if (!client.grantTypeAllowed('refresh_token')) return false
      if (code.scopes.has('offline_access')) return true
      const grant = code.grantId ? await c.oidc.provider.Grant.find(code.grantId) : undefined
      return Boolean(grant?.getOIDCScope().split(' ').includes('offline_access'))
    },
    // A first-party client's users are not asked for consent (section 23): its grant is made here, for the
    // scopes it asked for, as the library documents for skipping consent.
    loadExistingGrant: async (c) => {
      const client = c.oidc.client
      const session = c.oidc.session
      if (!client || !session) return undefined
      const grantId =
        (c.oidc.result?.consent as { grantId?: string } | undefined)?.grantId ??
        session.grantIdFor(client.clientId)
      if (grantId) return c.oidc.provider.Grant.find(grantId)
      const meta = client.metadata() as Record<string, unknown>
      if (meta.tessera_first_party !== true || !session.accountId) return undefined
      const grant = new c.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
      const params = c.oidc.params as Record<string, unknown> | undefined
      const scope = String(params?.scope ?? '') + (params?.tessera_offline === '1' ? ' offline_access' : '')
      grant.addOIDCScope(scope.trim())
      const resource =
        typeof params?.resource === 'string'
          ? resourceOf(tenant.authConfig.oauth, params.resource)
          : undefined
      if (resource) {
        const asked = new Set(scope.split(' '))
        const granted = resourceScopesFor(resource, client).filter((s) => asked.has(s))
        if (granted.length > 0) grant.addResourceScope(resource.indicator, granted.join(' '))
      }
      await grant.save()
      return grant
    },
    clientBasedCORS: (_c, origin, client) =>
      client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) ?? false,
    renderError: async (c, out) => {
      c.type = 'html'
      const text = (v: unknown) => String(v ?? '').replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
      c.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head><body><h1>${text(out.error)}</h1><p>${text(out.error_description)}</p></body></html>`
    },
    routes: { ...OIDC_ROUTES },
    fetch: outboundFetch(ctx.config.outboundAllowedHosts),
  }
}

/**
 * The library's outbound requests (back-channel logout), through the outbound rule (contract section 24,
 * "Where the service may connect"): a host of OUTBOUND_ALLOWED_HOSTS, as written in the URL, may be reached
 * at any address; every other one through a dispatcher that refuses special-use addresses.
 */
function outboundFetch(allowed: readonly string[]) {
  const send = guardedFetch(allowed, { timeoutMs: 2500 })
  return (url: string | URL | Request, options?: RequestInit & { dispatcher?: unknown }) => {
    // The library's own dispatcher would refuse a listed host's private address; ours chooses instead.
    const init: RequestInit & { dispatcher?: unknown } = { ...options }
    delete init.dispatcher
    return send(url, init)
  }
}

/**
 * Binds each provider session to the Tessera session that signed it in (`tessera_sid`, from the
 * interaction's login), and ends that Tessera session when the provider's ends (RP-initiated logout).
 */
function bindSessions(
  ctx: AppContext,
  tenant: TenantInfo,
  provider: Provider,
  ProviderClass: typeof Provider,
) {
  type Bound = { accountId?: string; tessera_sid?: string }
  const S = provider.Session as unknown as { IN_PAYLOAD: string[]; prototype: Record<string, unknown> }
  const inPayload = [...S.IN_PAYLOAD, 'tessera_sid']
  Object.defineProperty(S, 'IN_PAYLOAD', { get: () => inPayload })
  const loginAccount = S.prototype.loginAccount as (this: Bound, d: unknown) => void
  Object.defineProperty(S.prototype, 'loginAccount', {
    value: function (this: Bound, details: unknown) {
      loginAccount.call(this, details)
      const c = (ProviderClass as unknown as { ctx?: { oidc?: { entities?: Record<string, unknown> } } }).ctx
      const it = c?.oidc?.entities?.Interaction as
        { result?: { login?: { tessera_sid?: unknown } } } | undefined
      const sid = it?.result?.login?.tessera_sid
      this.tessera_sid = typeof sid === 'string' ? sid : undefined
    },
  })
  const destroy = S.prototype.destroy as (this: Bound) => Promise<void>
  Object.defineProperty(S.prototype, 'destroy', {
    value: async function (this: Bound) {
      await destroy.call(this)
      if (this.accountId && this.tessera_sid) await endTesseraSession(ctx, tenant.id, this.tessera_sid)
    },
  })
}

/** A new provider for one ACTIVE tenant, its issuer `{PUBLIC_URL}/t/{code}`. */
export async function createProvider(ctx: AppContext, tenant: TenantInfo): Promise<Provider> {
  // Why imported here: the library and its dependencies (about 0.7 s of CPU) load with the first provider,
  // so a service that serves no OpenID request starts as fast as before.
  const { default: ProviderClass, errors } = await import('oidc-provider')
  const storage = adapterFor(
    ctx.dbs.forTenant(tenant.id),
    tenant.id,
    ctx.clock,
    ctx.dbs.onServer(tenant.id),
    () => ProviderClass.ctx,
  )
  const provider = new ProviderClass(
    ctx.keystore.issuer(tenant.code),
    await configurationOf(ctx, tenant, errors, storage),
  )
  // Why: the proxy headers come from ourselves (routes.ts sets them from PUBLIC_URL), so every URL the
  // library builds starts with PUBLIC_URL whatever Host the request came with.
  provider.proxy = true
  provider.use(storage.requestMiddleware)
  bindSessions(ctx, tenant, provider, ProviderClass)
  // Why the prototype: the library compares secrets in the clear; ours are stored as hashes.
  Object.defineProperty(provider.Client.prototype, 'compareClientSecret', { value: compareClientSecret })
  return provider
}
