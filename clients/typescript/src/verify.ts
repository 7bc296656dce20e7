import { createRemoteJWKSet, customFetch, errors, jwtVerify, type RemoteJWKSetOptions } from 'jose'
import { TesseraError } from './errors.js'
import type { components } from './generated/schema.js'
import type { TokenClaims } from './jwt.js'

/** A tenant's issuer discovery document: `GET /t/{tenantCode}/.well-known/openid-configuration`. */
export type OpenIdConfiguration = components['schemas']['OpenIdConfiguration']

/** The claims of an access token that verified: those of every access token, plus its issuer. */
export type VerifiedClaims = TokenClaims & { iss: string }

/** What `createTokenVerifier` takes. */
export interface TokenVerifierOptions {
  /** The service's base URL (as for createTesseraClient): where the discovery document is read. */
  baseUrl: string
  /** The tenant whose access tokens are accepted (its code; case-insensitive). */
  tenantCode: string
  /** Replaces `globalThis.fetch` for the discovery document and the key set (to observe requests, or proxy them). */
  fetch?: (request: Request) => Promise<Response>
  /**
   * Milliseconds after a key set was fetched before a token with an unknown `kid` may fetch it again
   * (jose's `cooldownDuration`). Default 5000: a rotation signs new tokens at once, and jose's own default
   * (30 s) would refuse them that long; 5 s keeps the refetches (12 a minute at most) far inside the
   * key set's per-IP budget of 100 requests a minute.
   */
  cooldownMs?: number
  /**
   * Milliseconds the fetched key set is used before it is fetched again (jose's `cacheMaxAge`). Default
   * 300 000, the `max-age` the service sends: a key ended by a second rotation stops verifying here within
   * that time.
   */
  cacheMaxAgeMs?: number
  /** Seconds of clock difference tolerated on `exp` and `iat` (default 0). */
  clockToleranceSeconds?: number
  /** Replaces the clock (milliseconds since the epoch), for tests. */
  now?: () => number
}

/** Verifies a tenant's access tokens with its published public keys: no call to the service per token. */
export interface TokenVerifier {
  /**
   * The claims of a valid access token of the tenant. Throws a TesseraError with status 401 and the code
   * the service itself would answer: `TOKEN_EXPIRED` for a genuine token past its `exp`, `UNAUTHORIZED`
   * for anything else (bad signature, unknown `kid`, another issuer, an HS256 token, not a JWT). A failure
   * to read the discovery document or the key set is thrown as it is (a TesseraError from the service's
   * answer, fetch's TypeError, jose's JWKS error): the token was not judged.
   */
  verify(token: string): Promise<VerifiedClaims>
  /** The tenant's discovery document: fetched by the first call, kept after (fetched again after a failure). */
  discovery(): Promise<OpenIdConfiguration>
}

// Why only these: the algorithms the service signs with (`auth_config.signingAlgorithm` EdDSA or ES256).
// An HS256 token (the tenant's secret is not published) or an `alg: none` one is refused.
const ALGORITHMS = ['EdDSA', 'ES256']

// The jose failures that judge the token itself; any other (the key set could not be read) is not a refusal.
const REFUSALS: ReadonlySet<string> = new Set([
  errors.JWTClaimValidationFailed.code,
  errors.JWTInvalid.code,
  errors.JWSInvalid.code,
  errors.JWSSignatureVerificationFailed.code,
  errors.JOSEAlgNotAllowed.code,
  errors.JOSENotSupported.code,
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
])

/**
 * A verifier of one tenant's access tokens (EdDSA or ES256 tenants; see the contract's section 13). It reads
 * `{baseUrl}/t/{tenantCode}/.well-known/openid-configuration` once, then checks each token with jose's
 * `jwtVerify` against the issuer it names and the key set at its `jwks_uri` (`createRemoteJWKSet`: fetched
 * once, cached, fetched again for an unknown `kid`). Uses `fetch` and WebCrypto only: Node 20+ and browsers.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const base = options.baseUrl.replace(/\/+$/, '')
  const url = `${base}/t/${encodeURIComponent(options.tenantCode)}/.well-known/openid-configuration`
  let state: Promise<{ config: OpenIdConfiguration; jwks: ReturnType<typeof createRemoteJWKSet> }> | undefined

  const jwksOptions: RemoteJWKSetOptions = {
    cooldownDuration: options.cooldownMs ?? 5000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 300_000,
    ...(options.fetch
      ? { [customFetch]: (href: string, init: RequestInit) => send(new Request(href, init)) }
      : {}),
  }

  const open = async () => {
    const config = await fetchDiscovery(send, url)
    return { config, jwks: createRemoteJWKSet(new URL(config.jwks_uri), jwksOptions) }
  }
  const load = () =>
    (state ??= open().catch((err: unknown) => {
      // Why: a failure is not kept, so the next call tries again.
      state = undefined
      throw err
    }))

  return {
    discovery: async () => (await load()).config,
    async verify(token) {
      const { config, jwks } = await load()
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: config.issuer,
          algorithms: ALGORITHMS,
          requiredClaims: ['sub', 'exp'],
          clockTolerance: options.clockToleranceSeconds ?? 0,
          ...(options.now ? { currentDate: new Date(options.now()) } : {}),
        })
        return payload as unknown as VerifiedClaims
      } catch (err) {
        throw refusal(err)
      }
    },
  }
}

/** The discovery document, or the TesseraError of the service's answer (404 TENANT_NOT_FOUND, ...). */
async function fetchDiscovery(
  send: (request: Request) => Promise<Response>,
  url: string,
): Promise<OpenIdConfiguration> {
  const response = await send(new Request(url, { headers: { accept: 'application/json' } }))
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // Not JSON: kept as text for the error.
  }
  if (!response.ok) throw TesseraError.fromResponse(response, body)
  const doc = body as Partial<OpenIdConfiguration> | null
  if (typeof doc?.issuer !== 'string' || typeof doc.jwks_uri !== 'string') {
    throw new Error(`${url} did not answer a discovery document ({ issuer, jwks_uri })`)
  }
  // Why the whole document: it is the provider's (contract section 23), and every field of it is the caller's.
  return doc as OpenIdConfiguration
}

/** The TesseraError (401) a refused token gets, or the error itself when it does not judge the token. */
function refusal(err: unknown): unknown {
  if (!(err instanceof errors.JOSEError)) return err
  const expired = err instanceof errors.JWTExpired
  if (!expired && !REFUSALS.has(err.code)) return err
  const refused = new TesseraError({
    status: 401,
    code: expired ? 'TOKEN_EXPIRED' : 'UNAUTHORIZED',
    message: expired ? 'Token expired' : 'Invalid token',
  })
  refused.cause = err
  return refused
}
