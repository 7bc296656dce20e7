import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { rateLimitSubject } from '../../lib/cidr.js'
import { budgetSpentError } from '../account/secret-check.js'
import { checkRedirectUris } from '../oauth-clients/uris.js'
import { OIDC_SCOPES } from './client-metadata.js'
import type { PooledProvider } from './pool.js'

// Dynamic client registration (RFC 7591; contract section 23), for MCP clients: open to anyone while the
// tenant's `auth_config.oauth.dynamicRegistration` is on, for public clients only, 10 an hour from one
// address. The checks here come before the library's own; the library then registers the client, and the
// adapter writes it to oauth_clients as `dynamic` (adapter.ts).

const PER_IP_PER_HOUR = 10
const HOUR_MS = 3_600_000
const GRANTS = new Set(['authorization_code', 'refresh_token'])

/** An RFC 7591 error answer (section 3.2.2), sent as the library would. */
function refuse(reply: FastifyReply, error: string, description: string): FastifyReply {
  return reply.code(400).header('cache-control', 'no-store').send({ error, error_description: description })
}

/** Why a registration request is refused before the library sees it, or null. */
function problemOf(body: unknown): { error: string; description: string } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { error: 'invalid_client_metadata', description: 'the body must be a JSON object' }
  const m = body as Record<string, unknown>
  if (m.token_endpoint_auth_method !== 'none')
    return {
      error: 'invalid_client_metadata',
      description: 'only public clients register here: token_endpoint_auth_method must be "none"',
    }
  const grants = m.grant_types ?? ['authorization_code']
  if (!Array.isArray(grants) || grants.some((g) => typeof g !== 'string' || !GRANTS.has(g)))
    return {
      error: 'invalid_client_metadata',
      description: 'grant_types may hold authorization_code and refresh_token only',
    }
  const uris = m.redirect_uris
  if (
    !Array.isArray(uris) ||
    uris.length === 0 ||
    uris.length > 10 ||
    uris.some((u) => typeof u !== 'string')
  )
    return { error: 'invalid_redirect_uri', description: 'redirect_uris must hold 1 to 10 URIs' }
  try {
    checkRedirectUris(uris as string[], 'public', 'redirect_uris')
  } catch (err) {
    const details = err instanceof AppError ? (err.details as { message?: string }[] | undefined) : undefined
    return {
      error: 'invalid_redirect_uri',
      description: `a redirect URI ${details?.[0]?.message ?? 'is refused'}`,
    }
  }
  return null
}

/**
 * POST /t/:code/reg before the hand-over: 404 while the tenant keeps registration off, 429 past the
 * address's budget, 400 for a confidential client or a redirect URI the rules refuse. True to hand over.
 */
export async function admitRegistration(
  ctx: AppContext,
  pooled: PooledProvider,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean> {
  if (!pooled.tenant.authConfig.oauth.dynamicRegistration)
    throw new AppError('NOT_FOUND', 'Dynamic client registration is off for this tenant')
  const problem = problemOf(req.body)
  if (problem) {
    refuse(reply, problem.error, problem.description)
    return false
  }
  const now = ctx.clock.now()
  const charge = await ctx.counters.charge(
    pooled.tenant.id,
    `oauth-registration:${rateLimitSubject(req.ip)}`,
    PER_IP_PER_HOUR,
    HOUR_MS,
    now,
  )
  if (!charge.taken) throw budgetSpentError(charge.retryAfterMs)
  shapeForLibrary(req.body as Record<string, unknown>, pooled)
  return true
}

/**
 * What the library is handed: none of our own metadata (a registrant never sets `tessera_first_party`), and
 * `scope` split in two, as for the other clients (client-metadata.ts): the library's own scopes stay in
 * `scope`; every scope asked for that the provider or one of the tenant's resources knows goes to
 * `tessera_scopes`, which the row keeps.
 */
function shapeForLibrary(body: Record<string, unknown>, pooled: PooledProvider): void {
  for (const key of Object.keys(body)) if (key.startsWith('tessera_')) delete body[key]
  if (typeof body.scope !== 'string') return
  const known = new Set<string>([
    ...OIDC_SCOPES,
    ...pooled.tenant.authConfig.oauth.resources.flatMap((r) => r.scopes),
  ])
  const asked = body.scope.split(' ').filter((s) => known.has(s))
  const own = asked.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s))
  body.tessera_scopes = asked
  if (own.length > 0) body.scope = own.join(' ')
  else delete body.scope
}

/** The oauth_clients row of a client the library registered: public, dynamic, never first-party. */
export function registeredClientRow(tenantId: string, clientId: string, m: Record<string, unknown>) {
  const list = (v: unknown, fallback: string[]) =>
    Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : fallback
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)
  const scopes = list(
    m.tessera_scopes,
    text(m.scope)?.split(' ') ?? ['openid', 'profile', 'email', 'offline_access'],
  )
  return {
    tenant_id: tenantId,
    client_id: clientId,
    name: (text(m.client_name) ?? 'Dynamic client').slice(0, 128),
    type: 'public' as const,
    token_endpoint_auth_method: 'none' as const,
    redirect_uris: JSON.stringify(list(m.redirect_uris, [])),
    post_logout_redirect_uris: JSON.stringify(list(m.post_logout_redirect_uris, [])),
    grant_types: JSON.stringify(list(m.grant_types, ['authorization_code'])),
    scopes: JSON.stringify(scopes),
    first_party: false,
    dynamic: true,
    backchannel_logout_uri: null,
    logo_uri: null,
    client_uri: null,
    secret_hash: null,
  }
}
