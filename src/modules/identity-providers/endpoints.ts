import * as client from 'openid-client'
import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { checkOutbound, outboundFetch } from '../../lib/outbound.js'

// Where a provider lives (contract section 24, "Where the service may connect"): every endpoint passes the
// outbound rule before anything is stored, and an `oidc` provider's endpoints come from its discovery
// document, read through openid-client with the same rule on the address it connects to.

/** The endpoints a provider is stored with. */
export interface Endpoints {
  issuer: string | null
  authorizationEndpoint: string
  tokenEndpoint: string
  userinfoEndpoint: string | null
  jwksUri: string | null
}

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', 'Request validation failed', [{ path, message }])

/** VALIDATION_ERROR for an endpoint the service may not reach, 422 for a name that does not resolve. */
export async function assertReachable(ctx: AppContext, url: string, path: string): Promise<void> {
  const refusal = await checkOutbound(url, ctx.config.outboundAllowedHosts)
  if (!refusal) return
  if (refusal.reason === 'unresolvable')
    throw new AppError('IDENTITY_PROVIDER_UNREACHABLE', `${path}: the name does not resolve`)
  throw invalid(path, refusal.message)
}

/** openid-client's options for a request through the outbound rule (plain http only where it allows it). */
export function clientOptions(ctx: AppContext, url: string) {
  const send = outboundFetch(ctx.config.outboundAllowedHosts)
  return {
    // openid-client's body types are fetch's, narrowed (a Uint8Array where fetch takes a BodyInit).
    [client.customFetch]: (input: string, init: client.CustomFetchOptions) =>
      send(input, init as RequestInit),
    execute: new URL(url).protocol === 'http:' ? [client.allowInsecureRequests] : [],
  }
}

/**
 * An `oidc` provider's endpoints from its discovery document at `issuer` (openid-client checks that the
 * document names that issuer). IDENTITY_PROVIDER_UNREACHABLE when it cannot be read or names another.
 */
export async function discoverEndpoints(
  ctx: AppContext,
  issuer: string,
  clientId: string,
): Promise<Endpoints> {
  await assertReachable(ctx, issuer, 'body.issuer')
  const config = await client
    .discovery(new URL(issuer), clientId, undefined, undefined, clientOptions(ctx, issuer))
    .catch(() => {
      throw new AppError(
        'IDENTITY_PROVIDER_UNREACHABLE',
        'The discovery document could not be read, or it names another issuer',
      )
    })
  const m = config.serverMetadata()
  if (!m.authorization_endpoint || !m.token_endpoint || !m.jwks_uri)
    throw new AppError(
      'IDENTITY_PROVIDER_UNREACHABLE',
      'The discovery document lacks an authorization, token or JWKS endpoint',
    )
  const found: Endpoints = {
    issuer,
    authorizationEndpoint: m.authorization_endpoint,
    tokenEndpoint: m.token_endpoint,
    userinfoEndpoint: m.userinfo_endpoint ?? null,
    jwksUri: m.jwks_uri,
  }
  // The document is the provider's word: each endpoint it names passes the same rule as one given here.
  for (const url of [found.authorizationEndpoint, found.tokenEndpoint, found.userinfoEndpoint, found.jwksUri])
    if (url) await assertReachable(ctx, url, 'body.issuer')
  return found
}
