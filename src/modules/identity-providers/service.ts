import { randomUUID } from 'node:crypto'
import type { components } from '../../../generated/openapi.js'
import { tdb, type AppContext } from '../../context.js'
import type { PageParams } from '../../db/paginate.js'
import { AppError, fail } from '../../errors.js'
import { encryptSecret } from '../../lib/crypto-box.js'
import type { Principal } from '../../security/principal.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { assertGivableDefaultRoles } from '../publishable-keys/roles.js'
import { assertReachable, discoverEndpoints, type Endpoints } from './endpoints.js'
import { OIDC_DEFAULT_SCOPES, PRESETS, STANDARD_MAPPING } from './presets.js'
import * as q from './queries.js'

// A tenant's identity providers (contract section 24): what its people may sign in with. The client secret
// is sealed at rest with the service's secrets key and never answered; every endpoint passes the outbound
// rule before anything is stored.

type Schemas = components['schemas']
type IdentityProviderDto = Schemas['IdentityProvider']
type CreateBody = Schemas['CreateIdentityProviderRequest']
type UpdateBody = Schemas['UpdateIdentityProviderRequest']

/** The additional data the secret's seal is bound to: one provider's, so a sealed value cannot be moved. */
export const secretContext = (providerId: string) => `idp:${providerId}`

/** The one callback URL of a tenant, to be registered at every provider. */
export function callbackUrl(ctx: AppContext, tenantCode: string): string {
  return `${ctx.config.publicUrl}/t/${tenantCode}/federation/callback`
}

function toDto(ctx: AppContext, tenantCode: string, r: q.IdentityProviderRow): IdentityProviderDto {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    preset: r.preset,
    issuer: r.issuer,
    authorizationEndpoint: r.authorization_endpoint,
    tokenEndpoint: r.token_endpoint,
    userinfoEndpoint: r.userinfo_endpoint,
    clientId: r.client_id,
    tokenEndpointAuthMethod: r.token_endpoint_auth_method,
    scopes: r.scopes,
    claimMapping: { ...STANDARD_MAPPING, ...r.claim_mapping },
    allowSignup: r.allow_signup,
    trustEmail: r.trust_email,
    linking: r.linking,
    allowedDomains: r.allowed_domains,
    defaultRoles: r.default_roles,
    showOnLogin: r.show_on_login,
    callbackUrl: callbackUrl(ctx, tenantCode.toLowerCase()),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  }
}

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', 'Request validation failed', [{ path, message }])

interface Where {
  kind: Schemas['IdentityProviderKind']
  issuer?: string | null
  authorizationEndpoint?: string | null
  tokenEndpoint?: string | null
  userinfoEndpoint?: string | null
}

/** Where the provider lives, under the outbound rule: discovered for `oidc`, as given for `oauth2`. */
async function endpointsOf(ctx: AppContext, w: Where, clientId: string): Promise<Endpoints> {
  if (w.kind === 'oidc') {
    if (!w.issuer) throw invalid('body.issuer', 'an oidc provider needs its issuer')
    return discoverEndpoints(ctx, w.issuer, clientId)
  }
  const { authorizationEndpoint: auth, tokenEndpoint: token, userinfoEndpoint: info } = w
  if (!auth || !token || !info)
    throw invalid(
      'body',
      'an oauth2 provider needs authorizationEndpoint, tokenEndpoint and userinfoEndpoint',
    )
  await assertReachable(ctx, auth, 'body.authorizationEndpoint')
  await assertReachable(ctx, token, 'body.tokenEndpoint')
  await assertReachable(ctx, info, 'body.userinfoEndpoint')
  return {
    issuer: null,
    authorizationEndpoint: auth,
    tokenEndpoint: token,
    userinfoEndpoint: info,
    jwksUri: null,
  }
}

/** Writes one IDENTITY_PROVIDER_* row (section 25's target and changed field names, never a value). */
async function audit(
  ctx: AppContext,
  actor: Principal,
  action: 'IDENTITY_PROVIDER_CREATE' | 'IDENTITY_PROVIDER_UPDATE' | 'IDENTITY_PROVIDER_DELETE',
  providerId: string,
  changed: string[] | undefined,
  meta: RequestMeta,
): Promise<void> {
  await writeAudit(tdb(ctx, actor), {
    tenantId: actor.tenantId,
    action,
    success: true,
    actor,
    metadata: {
      target: { type: 'identity_provider', id: providerId },
      providerId,
      ...(changed ? { changed } : {}),
    },
    meta,
  })
}

/** POST /identity-providers: a provider of the caller's tenant, its endpoints read or checked first. */
export async function createIdentityProvider(
  ctx: AppContext,
  actor: Principal,
  body: CreateBody,
  meta: RequestMeta,
): Promise<IdentityProviderDto> {
  const preset = body.preset ? PRESETS[body.preset] : undefined
  if (preset && preset.kind !== body.kind)
    throw invalid('body.preset', `the ${body.preset} preset is an ${preset.kind} provider`)
  const db = tdb(ctx, actor)
  const defaultRoles = [...new Set(body.defaultRoles ?? [])]
  await assertGivableDefaultRoles(db, actor, defaultRoles)
  const where = await endpointsOf(
    ctx,
    {
      kind: body.kind,
      issuer: body.issuer ?? preset?.issuer,
      authorizationEndpoint: body.authorizationEndpoint ?? preset?.authorizationEndpoint,
      tokenEndpoint: body.tokenEndpoint ?? preset?.tokenEndpoint,
      userinfoEndpoint: body.userinfoEndpoint ?? preset?.userinfoEndpoint,
    },
    body.clientId,
  )
  const id = randomUUID()
  const row = await q.insertIdentityProvider(db, {
    id,
    tenant_id: actor.tenantId,
    name: body.name,
    kind: body.kind,
    preset: body.preset ?? null,
    issuer: where.issuer,
    authorization_endpoint: where.authorizationEndpoint,
    token_endpoint: where.tokenEndpoint,
    userinfo_endpoint: where.userinfoEndpoint,
    jwks_uri: where.jwksUri,
    client_id: body.clientId,
    client_secret_enc: encryptSecret(body.clientSecret, ctx.secretsKey, secretContext(id)),
    token_endpoint_auth_method: body.tokenEndpointAuthMethod ?? 'client_secret_basic',
    scopes: JSON.stringify(body.scopes ?? preset?.scopes ?? OIDC_DEFAULT_SCOPES),
    claim_mapping: JSON.stringify({ ...preset?.claimMapping, ...body.claimMapping }),
    allow_signup: body.allowSignup ?? false,
    trust_email: body.trustEmail ?? false,
    linking: body.linking ?? 'never',
    allowed_domains: JSON.stringify((body.allowedDomains ?? []).map((d) => d.toLowerCase())),
    default_roles: JSON.stringify(defaultRoles),
    show_on_login: body.showOnLogin ?? true,
  })
  await audit(ctx, actor, 'IDENTITY_PROVIDER_CREATE', id, Object.keys(body).sort(), meta)
  return toDto(ctx, actor.tenantCode, row)
}

/** GET /identity-providers: the caller's tenant's providers, newest first. */
export async function listIdentityProviders(ctx: AppContext, actor: Principal, p: PageParams) {
  const page = await q.listIdentityProviders(tdb(ctx, actor), actor.tenantId, p)
  return { ...page, items: page.items.map((r) => toDto(ctx, actor.tenantCode, r)) }
}

/** GET /identity-providers/:id: one provider of the caller's tenant; IDENTITY_PROVIDER_NOT_FOUND otherwise. */
export async function getIdentityProvider(ctx: AppContext, actor: Principal, id: string) {
  const row = await q.findIdentityProvider(tdb(ctx, actor), actor.tenantId, id)
  return toDto(ctx, actor.tenantCode, row ?? fail('IDENTITY_PROVIDER_NOT_FOUND'))
}

/** PATCH /identity-providers/:id: the given fields, the result under the rules of creation. */
export async function updateIdentityProvider(
  ctx: AppContext,
  actor: Principal,
  id: string,
  body: UpdateBody,
  meta: RequestMeta,
): Promise<IdentityProviderDto> {
  const db = tdb(ctx, actor)
  const before = (await q.findIdentityProvider(db, actor.tenantId, id)) ?? fail('IDENTITY_PROVIDER_NOT_FOUND')
  const defaultRoles = body.defaultRoles ? [...new Set(body.defaultRoles)] : undefined
  if (defaultRoles) await assertGivableDefaultRoles(db, actor, defaultRoles)
  const moved =
    body.issuer !== undefined ||
    body.authorizationEndpoint !== undefined ||
    body.tokenEndpoint !== undefined ||
    body.userinfoEndpoint !== undefined
  // Why read the endpoints again only when one is given: a stored provider was checked when it was stored,
  // and each request of a sign-in checks its endpoint again (section 24).
  const where = moved
    ? await endpointsOf(
        ctx,
        {
          kind: before.kind,
          issuer: body.issuer ?? before.issuer,
          authorizationEndpoint: body.authorizationEndpoint ?? before.authorization_endpoint,
          tokenEndpoint: body.tokenEndpoint ?? before.token_endpoint,
          userinfoEndpoint: body.userinfoEndpoint ?? before.userinfo_endpoint,
        },
        body.clientId ?? before.client_id,
      )
    : undefined
  const row =
    (await q.updateIdentityProvider(db, actor.tenantId, id, {
      name: body.name,
      ...(where
        ? {
            issuer: where.issuer,
            authorization_endpoint: where.authorizationEndpoint,
            token_endpoint: where.tokenEndpoint,
            userinfo_endpoint: where.userinfoEndpoint,
            jwks_uri: where.jwksUri,
          }
        : {}),
      client_id: body.clientId,
      client_secret_enc:
        body.clientSecret === undefined
          ? undefined
          : encryptSecret(body.clientSecret, ctx.secretsKey, secretContext(id)),
      token_endpoint_auth_method: body.tokenEndpointAuthMethod,
      scopes: body.scopes ? JSON.stringify(body.scopes) : undefined,
      // Merged, as a PATCH is: a preset's mapping (GitHub's `sub: id`) survives a change of one piece.
      claim_mapping: body.claimMapping
        ? JSON.stringify({ ...before.claim_mapping, ...body.claimMapping })
        : undefined,
      allow_signup: body.allowSignup,
      trust_email: body.trustEmail,
      linking: body.linking,
      allowed_domains: body.allowedDomains
        ? JSON.stringify(body.allowedDomains.map((d) => d.toLowerCase()))
        : undefined,
      default_roles: defaultRoles ? JSON.stringify(defaultRoles) : undefined,
      show_on_login: body.showOnLogin,
    })) ?? fail('IDENTITY_PROVIDER_NOT_FOUND')
  await audit(ctx, actor, 'IDENTITY_PROVIDER_UPDATE', id, Object.keys(body).sort(), meta)
  return toDto(ctx, actor.tenantCode, row)
}

/** DELETE /identity-providers/:id: the provider and the links it made. */
export async function deleteIdentityProvider(
  ctx: AppContext,
  actor: Principal,
  id: string,
  meta: RequestMeta,
) {
  if (!(await q.deleteIdentityProvider(tdb(ctx, actor), actor.tenantId, id)))
    fail('IDENTITY_PROVIDER_NOT_FOUND')
  await audit(ctx, actor, 'IDENTITY_PROVIDER_DELETE', id, undefined, meta)
  return { id, deleted: true as const }
}

/** GET /login/providers: an ACTIVE tenant's sign-in providers; none for any other code (no enumeration). */
export async function listLoginProviders(ctx: AppContext, tenantCode: string) {
  const tenant = await ctx.tenants.byCode(tenantCode)
  if (!tenant || tenant.status !== 'ACTIVE') return { items: [] }
  return { items: await q.listLoginProviders(ctx.dbs.forTenant(tenant.id), tenant.id) }
}
