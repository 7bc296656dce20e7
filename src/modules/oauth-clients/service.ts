import type { components } from '../../../generated/openapi.js'
import { tdb, type AppContext } from '../../context.js'
import type { PageParams } from '../../db/paginate.js'
import { AppError, fail } from '../../errors.js'
import { randomToken, sha256Hex } from '../../lib/tokens.js'
import type { Principal } from '../../security/principal.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { deleteClientPayloads } from '../oidc/payload-queries.js'
import * as q from './queries.js'
import { checkOutbound } from '../../lib/outbound.js'
import { checkRedirectUris, checkShownUri, outboundAllowed } from './uris.js'

// The applications of a tenant's OpenID provider (contract section 23): registered here, read by the provider
// (src/modules/oidc) through queries.ts. A change reaches every instance's provider pool at once.

type Schemas = components['schemas']
type OAuthClientDto = Schemas['OAuthClient']
type CreateBody = Schemas['CreateOAuthClientRequest']
type UpdateBody = Schemas['UpdateOAuthClientRequest']
type Method = Schemas['TokenEndpointAuthMethod']
type GrantType = Schemas['OAuthGrantType']

const DEFAULT_SCOPES = ['openid', 'profile', 'email', 'offline_access']
const DEFAULT_GRANTS: GrantType[] = ['authorization_code', 'refresh_token']

/** A client row as the API shows it: never a secret or its hash. */
export function toOAuthClientDto(r: q.OAuthClientRow): OAuthClientDto {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    clientId: r.client_id,
    name: r.name,
    type: r.type,
    tokenEndpointAuthMethod: r.token_endpoint_auth_method,
    redirectUris: r.redirect_uris,
    postLogoutRedirectUris: r.post_logout_redirect_uris,
    grantTypes: r.grant_types as GrantType[],
    scopes: r.scopes,
    firstParty: r.first_party,
    dynamic: r.dynamic,
    backchannelLogoutUri: r.backchannel_logout_uri,
    logoUri: r.logo_uri,
    clientUri: r.client_uri,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  }
}

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', 'Request validation failed', [{ path, message }])

/** A fresh secret (256 random bits) and the hash that is stored of it. */
function newSecret(): { secret: string; hash: string } {
  const secret = randomToken(32)
  return { secret, hash: sha256Hex(secret) }
}

interface Settled {
  type: 'confidential' | 'public'
  method: Method
  grantTypes: GrantType[]
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  backchannelLogoutUri: string | null
}

/** The client as it would be after a create or an update, checked against the rules of creation. */
function settle(ctx: AppContext, s: Settled): Settled {
  if (s.type === 'public' && s.method !== 'none')
    throw invalid('body.tokenEndpointAuthMethod', 'a public client authenticates with none')
  if (s.type === 'confidential' && s.method === 'none')
    throw invalid('body.tokenEndpointAuthMethod', 'a confidential client authenticates with its secret')
  if (s.type === 'public' && s.grantTypes.includes('client_credentials'))
    throw invalid('body.grantTypes', 'client_credentials is for a confidential client only')
  if (s.grantTypes.includes('refresh_token') && !s.grantTypes.includes('authorization_code'))
    throw invalid('body.grantTypes', 'refresh_token comes with authorization_code')
  checkRedirectUris(s.redirectUris, s.type, 'redirectUris')
  checkRedirectUris(s.postLogoutRedirectUris, s.type, 'postLogoutRedirectUris')
  if (
    s.backchannelLogoutUri !== null &&
    !outboundAllowed(s.backchannelLogoutUri, ctx.config.outboundAllowedHosts)
  )
    throw invalid('body.backchannelLogoutUri', 'must be https, or http on a host of OUTBOUND_ALLOWED_HOSTS')
  return s
}

/**
 * The back-channel logout URI passes section 24's whole rule at registration: beside its form (settle), an
 * unlisted host must resolve to public addresses only. Every logout request checks it again (the provider's fetch).
 */
async function assertBackchannelReachable(ctx: AppContext, uri: string | null): Promise<void> {
  if (uri === null) return
  const refusal = await checkOutbound(uri, ctx.config.outboundAllowedHosts)
  if (refusal) throw invalid('body.backchannelLogoutUri', refusal.message)
}

/** Writes one OAUTH_CLIENT_* row (section 25's target and changed, never a value) in the tenant's log. */
async function audit(
  ctx: AppContext,
  actor: Principal,
  action: 'OAUTH_CLIENT_CREATE' | 'OAUTH_CLIENT_UPDATE' | 'OAUTH_CLIENT_DELETE',
  client: { id: string; client_id: string },
  changed: string[] | undefined,
  meta: RequestMeta,
): Promise<void> {
  await writeAudit(tdb(ctx, actor), {
    tenantId: actor.tenantId,
    action,
    success: true,
    actor,
    metadata: {
      target: { type: 'oauth_client', id: client.id },
      clientId: client.client_id,
      ...(changed ? { changed } : {}),
    },
    meta,
  })
}

/** POST /oauth/clients: a client of the caller's tenant; a confidential one gets its secret this once. */
export async function createOAuthClient(
  ctx: AppContext,
  actor: Principal,
  body: CreateBody,
  meta: RequestMeta,
): Promise<OAuthClientDto & { clientSecret: string | null }> {
  const s = settle(ctx, {
    type: body.type,
    method: body.tokenEndpointAuthMethod ?? (body.type === 'public' ? 'none' : 'client_secret_basic'),
    grantTypes: body.grantTypes ?? DEFAULT_GRANTS,
    redirectUris: body.redirectUris,
    postLogoutRedirectUris: body.postLogoutRedirectUris ?? [],
    backchannelLogoutUri: body.backchannelLogoutUri ?? null,
  })
  checkShownUri(body.logoUri, 'logoUri')
  checkShownUri(body.clientUri, 'clientUri')
  await assertBackchannelReachable(ctx, s.backchannelLogoutUri)
  const secret = s.type === 'confidential' ? newSecret() : null
  const row = await q.insertOAuthClient(tdb(ctx, actor), {
    tenant_id: actor.tenantId,
    client_id: randomToken(18),
    name: body.name,
    type: s.type,
    token_endpoint_auth_method: s.method,
    redirect_uris: JSON.stringify(s.redirectUris),
    post_logout_redirect_uris: JSON.stringify(s.postLogoutRedirectUris),
    grant_types: JSON.stringify(s.grantTypes),
    scopes: JSON.stringify(body.scopes ?? DEFAULT_SCOPES),
    first_party: body.firstParty ?? false,
    backchannel_logout_uri: s.backchannelLogoutUri,
    logo_uri: body.logoUri ?? null,
    client_uri: body.clientUri ?? null,
    secret_hash: secret?.hash ?? null,
  })
  await audit(ctx, actor, 'OAUTH_CLIENT_CREATE', row, Object.keys(body).sort(), meta)
  return { ...toOAuthClientDto(row), clientSecret: secret?.secret ?? null }
}

/** GET /oauth/clients: the caller's tenant's clients, newest first. */
export async function listOAuthClients(ctx: AppContext, actor: Principal, p: PageParams) {
  const page = await q.listOAuthClients(tdb(ctx, actor), actor.tenantId, p)
  return { ...page, items: page.items.map(toOAuthClientDto) }
}

/** GET /oauth/clients/:id: one client of the caller's tenant; OAUTH_CLIENT_NOT_FOUND otherwise. */
export async function getOAuthClient(ctx: AppContext, actor: Principal, id: string) {
  const row = await q.findOAuthClient(tdb(ctx, actor), actor.tenantId, id)
  return toOAuthClientDto(row ?? fail('OAUTH_CLIENT_NOT_FOUND'))
}

/** PATCH /oauth/clients/:id: the given fields, the result under the rules of creation; at once everywhere. */
export async function updateOAuthClient(
  ctx: AppContext,
  actor: Principal,
  id: string,
  body: UpdateBody,
  meta: RequestMeta,
) {
  const db = tdb(ctx, actor)
  const before = (await q.findOAuthClient(db, actor.tenantId, id)) ?? fail('OAUTH_CLIENT_NOT_FOUND')
  const s = settle(ctx, {
    type: before.type,
    method: body.tokenEndpointAuthMethod ?? before.token_endpoint_auth_method,
    grantTypes: body.grantTypes ?? (before.grant_types as GrantType[]),
    redirectUris: body.redirectUris ?? before.redirect_uris,
    postLogoutRedirectUris: body.postLogoutRedirectUris ?? before.post_logout_redirect_uris,
    backchannelLogoutUri:
      body.backchannelLogoutUri === undefined ? before.backchannel_logout_uri : body.backchannelLogoutUri,
  })
  checkShownUri(body.logoUri, 'logoUri')
  checkShownUri(body.clientUri, 'clientUri')
  if (body.backchannelLogoutUri) await assertBackchannelReachable(ctx, s.backchannelLogoutUri)
  if (before.dynamic && body.firstParty)
    throw invalid('body.firstParty', 'a dynamic client is never first-party')
  const row =
    (await q.updateOAuthClient(db, actor.tenantId, id, {
      name: body.name,
      token_endpoint_auth_method: s.method,
      redirect_uris: JSON.stringify(s.redirectUris),
      post_logout_redirect_uris: JSON.stringify(s.postLogoutRedirectUris),
      grant_types: JSON.stringify(s.grantTypes),
      scopes: body.scopes ? JSON.stringify(body.scopes) : undefined,
      first_party: body.firstParty,
      backchannel_logout_uri: s.backchannelLogoutUri,
      logo_uri: body.logoUri,
      client_uri: body.clientUri,
    })) ?? fail('OAUTH_CLIENT_NOT_FOUND')
  await ctx.changed({ oauthClients: actor.tenantId })
  await audit(ctx, actor, 'OAUTH_CLIENT_UPDATE', row, Object.keys(body).sort(), meta)
  return toOAuthClientDto(row)
}

/** DELETE /oauth/clients/:id: the client and everything the provider issued to it. */
export async function deleteOAuthClient(ctx: AppContext, actor: Principal, id: string, meta: RequestMeta) {
  const db = tdb(ctx, actor)
  const clientId = await db.transaction().execute(async (trx) => {
    const gone = await q.deleteOAuthClient(trx, actor.tenantId, id)
    if (gone === undefined) fail('OAUTH_CLIENT_NOT_FOUND')
    await deleteClientPayloads(trx, actor.tenantId, gone)
    return gone
  })
  await ctx.changed({ oauthClients: actor.tenantId })
  await audit(ctx, actor, 'OAUTH_CLIENT_DELETE', { id, client_id: clientId }, undefined, meta)
  return { id, deleted: true as const }
}

/** POST /oauth/clients/:id/secret/rotate: a new secret, shown once; the former one lasts the grace asked for. */
export async function rotateOAuthClientSecret(
  ctx: AppContext,
  actor: Principal,
  id: string,
  body: Schemas['RotateOAuthClientSecretRequest'] | undefined,
  meta: RequestMeta,
) {
  const db = tdb(ctx, actor)
  const before = (await q.findOAuthClientHashes(db, actor.tenantId, id)) ?? fail('OAUTH_CLIENT_NOT_FOUND')
  if (before.type === 'public') throw invalid('params.id', 'a public client has no secret')
  const grace = body?.gracePeriodSeconds ?? 0
  const secret = newSecret()
  const row =
    (await q.updateOAuthClient(db, actor.tenantId, id, {
      secret_hash: secret.hash,
      previous_secret_hash: grace > 0 ? before.secret_hash : null,
      previous_secret_expires_at: grace > 0 ? new Date(ctx.clock.now() + grace * 1000) : null,
    })) ?? fail('OAUTH_CLIENT_NOT_FOUND')
  await ctx.changed({ oauthClients: actor.tenantId })
  await audit(ctx, actor, 'OAUTH_CLIENT_UPDATE', row, ['clientSecret'], meta)
  return { ...toOAuthClientDto(row), clientSecret: secret.secret }
}
