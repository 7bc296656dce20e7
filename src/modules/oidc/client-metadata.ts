import type { OAuthClientWithHashes } from '../oauth-clients/queries.js'

// An oauth_clients row as `oidc-provider` client metadata (RFC 7591 names). The secret is its stored hash:
// the library never sees a secret, and compares what a client presents through secrets.ts.

/** Our own metadata beside RFC 7591's (the library's `extraClientMetadata`). */
export const EXTRA_CLIENT_METADATA = [
  'tessera_first_party',
  'tessera_scopes',
  'tessera_previous_secret_hash',
  'tessera_previous_secret_until',
] as const

/** The provider's own scopes (the library's `scopes`); a resource's scopes are its resource server's. */
export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email', 'roles'] as const

/** The client's `scope` metadata: the OpenID scopes it was given, which the library holds requests to. */
function staticScopesOf(scopes: readonly string[]): string {
  const given = OIDC_SCOPES.filter((s) => scopes.includes(s))
  // Why offline_access for a client given none of them: an empty `scope` would let it ask for any of them,
  // and offline_access alone grants nothing to a client without the refresh_token grant (issueRefreshToken).
  return given.length > 0 ? given.join(' ') : 'offline_access'
}

/** The client's metadata, as the adapter hands it to the library. */
export function clientMetadata(r: OAuthClientWithHashes, nowMs: number): Record<string, unknown> {
  const previousLive =
    r.previous_secret_hash !== null &&
    r.previous_secret_expires_at !== null &&
    new Date(r.previous_secret_expires_at).getTime() > nowMs
  return {
    client_id: r.client_id,
    ...(r.secret_hash ? { client_secret: r.secret_hash } : {}),
    client_name: r.name,
    // Why native for a public client: RFC 8252's rules (loopback on any port, private-use schemes) are
    // the library's for native clients; a confidential client is a web server.
    application_type: r.type === 'public' ? 'native' : 'web',
    token_endpoint_auth_method: r.token_endpoint_auth_method,
    // Section 23: a client authenticates the way it registered, at every endpoint that asks.
    introspection_endpoint_auth_method: r.token_endpoint_auth_method,
    revocation_endpoint_auth_method: r.token_endpoint_auth_method,
    redirect_uris: r.redirect_uris,
    post_logout_redirect_uris: r.post_logout_redirect_uris,
    grant_types: r.grant_types,
    response_types: r.grant_types.includes('authorization_code') ? ['code'] : [],
    scope: staticScopesOf(r.scopes),
    // Every scope given, resources' too: the library's `scope` may hold only its own (OpenID) scopes.
    tessera_scopes: r.scopes,
    ...(r.logo_uri ? { logo_uri: r.logo_uri } : {}),
    ...(r.client_uri ? { client_uri: r.client_uri } : {}),
    ...(r.backchannel_logout_uri
      ? { backchannel_logout_uri: r.backchannel_logout_uri, backchannel_logout_session_required: true }
      : {}),
    id_token_signed_response_alg: 'RS256',
    tessera_first_party: r.first_party,
    ...(previousLive
      ? {
          tessera_previous_secret_hash: r.previous_secret_hash,
          tessera_previous_secret_until: new Date(r.previous_secret_expires_at as Date).getTime(),
        }
      : {}),
  }
}
