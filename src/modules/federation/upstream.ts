import * as client from 'openid-client'
import { LRUCache } from 'lru-cache'
import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { freshnessMs } from '../../lib/cacheable.js'
import { decryptSecret } from '../../lib/crypto-box.js'
import { normalizeEmail } from '../../lib/identifiers.js'
import { assertReachable, clientOptions } from '../identity-providers/endpoints.js'
import { STANDARD_MAPPING } from '../identity-providers/presets.js'
import type { IdentityProviderRow } from '../identity-providers/queries.js'
import { secretContext } from '../identity-providers/service.js'

// The relying party's side of a federated sign-in (contract section 24), on openid-client 6: an `oidc`
// provider from its discovery document (PKCE, state, nonce and the ID token's checks are the library's), an
// `oauth2` one from its stored endpoints through the library's generic calls. Every request goes through the
// outbound rule (identity-providers/endpoints.ts).

/** The person as the provider describes it, by the provider's claim mapping. */
export interface UpstreamPerson {
  subject: string
  email: string | null
  emailVerified: boolean
  username: string | null
}

/**
 * Why a discovery document is kept: a flow's start should not wait on it. It is kept as long as its own
 * `Cache-Control` says (ten minutes when silent); openid-client keeps the JWKS inside the configuration, by
 * its own freshness, and refetches it on an unknown `kid`.
 */
const DISCOVERY_TTL_MS = 10 * 60_000
const configs = new LRUCache<string, client.Configuration>({ max: 1000, ttl: DISCOVERY_TTL_MS })

/** The client authentication the provider was registered with. */
function authOf(ctx: AppContext, p: IdentityProviderRow) {
  const secret = decryptSecret(p.client_secret_enc, ctx.secretsKey, secretContext(p.id))
  return p.token_endpoint_auth_method === 'client_secret_post'
    ? client.ClientSecretPost(secret)
    : client.ClientSecretBasic(secret)
}

/**
 * openid-client's configuration of a provider: discovered (and kept ten minutes, per provider version) for
 * `oidc`, built from the stored endpoints for `oauth2`. IDENTITY_PROVIDER_UNREACHABLE when discovery fails.
 */
export async function configurationOf(
  ctx: AppContext,
  p: IdentityProviderRow,
): Promise<client.Configuration> {
  const key = `${p.id}:${new Date(p.updated_at).getTime()}`
  const kept = configs.get(key)
  if (kept) return kept
  let config: client.Configuration
  let ttl = DISCOVERY_TTL_MS
  if (p.kind === 'oidc' && p.issuer) {
    await assertReachable(ctx, p.issuer, 'issuer')
    const opts = clientOptions(ctx, p.issuer)
    const send = opts[client.customFetch]
    let discovering = true
    opts[client.customFetch] = async (input, init) => {
      const res = await send(input, init)
      if (discovering) ttl = freshnessMs(res.headers.get('cache-control'), DISCOVERY_TTL_MS)
      return res
    }
    // The options' fetch and allowInsecureRequests (http on a listed host) stay with the configuration.
    config = await client
      .discovery(new URL(p.issuer), p.client_id, undefined, authOf(ctx, p), opts)
      .finally(() => (discovering = false))
      .catch(() => {
        throw new AppError('IDENTITY_PROVIDER_UNREACHABLE', 'The discovery document could not be read')
      })
    // Why: openid-client skips the ID token's signature from the token endpoint (TLS stands in for it);
    // section 24 wants it checked by the provider's JWKS, kept with the configuration, refetched on a new kid.
    client.enableNonRepudiationChecks(config)
  } else {
    const metadata: client.ServerMetadata = {
      issuer: new URL(p.authorization_endpoint).origin,
      authorization_endpoint: p.authorization_endpoint,
      token_endpoint: p.token_endpoint,
      userinfo_endpoint: p.userinfo_endpoint ?? undefined,
    }
    config = new client.Configuration(metadata, p.client_id, undefined, authOf(ctx, p))
    const opts = clientOptions(ctx, p.token_endpoint)
    config[client.customFetch] = opts[client.customFetch]
    for (const step of opts.execute) step(config)
  }
  if (ttl > 0) configs.set(key, config, { ttl })
  return config
}

/** The provider's authorization URL for this flow (the service's own state, nonce and PKCE S256). */
export async function authorizationUrl(
  ctx: AppContext,
  p: IdentityProviderRow,
  f: { redirectUri: string; state: string; nonce: string; verifier: string },
): Promise<URL> {
  const config = await configurationOf(ctx, p)
  await assertReachable(ctx, config.serverMetadata().authorization_endpoint ?? '', 'authorizationEndpoint')
  return client.buildAuthorizationUrl(config, {
    redirect_uri: f.redirectUri,
    scope: p.scopes.join(' '),
    state: f.state,
    ...(p.kind === 'oidc' ? { nonce: f.nonce } : {}),
    code_challenge: await client.calculatePKCECodeChallenge(f.verifier),
    code_challenge_method: 'S256',
  })
}

const normalizeEmailOrNull = (v: string | null) => (v === null ? null : normalizeEmail(v))

const asString = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null

/**
 * Exchanges the callback's code (PKCE, state; for `oidc` the ID token's signature by the JWKS, `iss`, `aud`,
 * `nonce` and `exp`, all checked by openid-client) and reads the person: the ID token's claims, then userinfo's
 * (a conformant provider puts scope claims there when it issues an access token). Throws on any refusal.
 */
export async function personOf(
  ctx: AppContext,
  p: IdentityProviderRow,
  callback: URL,
  f: { state: string; nonce: string; verifier: string },
): Promise<UpstreamPerson> {
  const config = await configurationOf(ctx, p)
  await assertReachable(ctx, config.serverMetadata().token_endpoint ?? '', 'tokenEndpoint')
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: f.verifier,
    expectedState: f.state,
    ...(p.kind === 'oidc' ? { expectedNonce: f.nonce, idTokenExpected: true } : {}),
  })
  const idClaims: Record<string, unknown> = (p.kind === 'oidc' ? tokens.claims() : undefined) ?? {}
  let info: Record<string, unknown> = {}
  const userinfo = config.serverMetadata().userinfo_endpoint
  if (userinfo) {
    await assertReachable(ctx, userinfo, 'userinfoEndpoint')
    if (p.kind === 'oidc' && typeof idClaims.sub === 'string') {
      info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)
    } else {
      const res = await client.fetchProtectedResource(config, tokens.access_token, new URL(userinfo), 'GET')
      if (!res.ok) throw new Error(`userinfo answered ${res.status}`)
      info = (await res.json()) as Record<string, unknown>
    }
  }
  const claims: Record<string, unknown> = { ...idClaims, ...info }
  const m = { ...STANDARD_MAPPING, ...p.claim_mapping }
  // Why the ID token's sub wins: it is the signed one, and fetchUserInfo has checked userinfo's against it.
  const subject = asString(idClaims.sub) ?? asString(claims[m.sub])
  if (!subject || subject.length > 255) throw new Error('no subject')
  const verified = claims[m.emailVerified]
  return {
    subject,
    // Why normalized: an implausible or over-long address from a provider is no address at all.
    email: normalizeEmailOrNull(asString(claims[m.email])),
    emailVerified: verified === true || verified === 'true',
    username: asString(claims[m.username]),
  }
}
