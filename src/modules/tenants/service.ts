import { newUserIdentifiers } from '../users/new-identifiers.js'
import type { Transaction } from 'kysely'
import { requireRecentSignIn, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { isSuperAdmin, usersBehind, type Principal, type UserPrincipal } from '../../security/principal.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { retryOnContention } from '../../db/contention.js'
import type { PageParams } from '../../db/paginate.js'
import { revokeTenantSessions } from '../sessions/queries.js'
import { checkPassword } from '../../lib/password-policy.js'
import {
  defaultAuthConfig,
  mergeAuthConfig,
  resolveAuthConfig,
  type AuthConfig,
} from '../../security/auth-config.js'
import { assertEmailConfigPatch } from '../email/config.js'
import { assertOAuthConfig } from '../oauth-clients/resources.js'
import { assertWebauthnConfig } from '../passkeys/config.js'
import { installFirstKeyPair, switchSigningAlgorithm } from './signing-keys.js'
import { toTenantDto, type TenantDto } from './dto.js'
import { provisionTenant } from './provision.js'
import { assertBrandingConfig, completeBranding } from './branding.js'
import {
  findTenantByCode,
  findTenantWithDatabase,
  listTenantRows,
  lockTenant,
  setAuthConfig,
  updateTenantRow,
  type TenantFilter,
} from './queries.js'

/**
 * The tenant id a caller may act on: any tenant for platform principals holding `admin:*`, otherwise
 * only its own. Another tenant's id is TENANT_NOT_FOUND, so existence is not revealed.
 */
function assertTenantScope(p: Principal, tenantId: string): void {
  if (!isSuperAdmin(p) && tenantId !== p.tenantId) fail('TENANT_NOT_FOUND')
}

/** One tenant as the API shows it, or TENANT_NOT_FOUND. Reads the main database (tenants live there). */
async function tenantDto(ctx: AppContext, tenantId: string): Promise<TenantDto> {
  const row = await findTenantWithDatabase(ctx.dbs.main, tenantId)
  return row ? toTenantDto(row) : fail('TENANT_NOT_FOUND')
}

/** GET /tenants/:id: any tenant for super admins, otherwise only the caller's own. */
export async function getTenant(ctx: AppContext, p: Principal, tenantId: string): Promise<TenantDto> {
  assertTenantScope(p, tenantId)
  return tenantDto(ctx, tenantId)
}

/** GET /tenants/me: the caller's own tenant. */
export function getMyTenant(ctx: AppContext, actor: UserPrincipal): Promise<TenantDto> {
  return tenantDto(ctx, actor.tenantId)
}

/** GET /tenants/me/config: the caller's own tenant's resolved auth_config. */
export async function getMyTenantConfig(ctx: AppContext, actor: UserPrincipal): Promise<AuthConfig> {
  return (await tenantDto(ctx, actor.tenantId)).auth_config
}

/** One page of tenants: every tenant for super admins, the caller's own otherwise. */
async function tenantPage(ctx: AppContext, p: Principal, f: Omit<TenantFilter, 'onlyId'>, page: PageParams) {
  const scoped: TenantFilter = isSuperAdmin(p) ? f : { ...f, onlyId: p.tenantId }
  const rows = await listTenantRows(ctx.dbs.main, scoped, page)
  return { ...rows, items: rows.items.map(toTenantDto) }
}

/** GET /tenants: every tenant for super admins (optionally of one status), the caller's own otherwise. */
export function listTenants(
  ctx: AppContext,
  p: Principal,
  query: PageParams & { status?: 'ACTIVE' | 'INACTIVE' },
) {
  return tenantPage(ctx, p, { status: query.status }, query)
}

/** GET /tenants/search: tenants whose code or name contains `q` (case-insensitive), scoped as listTenants. */
export function searchTenants(ctx: AppContext, p: Principal, query: PageParams & { q: string }) {
  return tenantPage(ctx, p, { q: query.q }, query)
}

type AuthConfigPatch = Record<string, unknown> & { rateLimits?: unknown }

function assertMaySetRateLimits(p: Principal, patch: AuthConfigPatch | undefined): void {
  // Why: raising a budget is the platform operators' call (docs/decisions.md D5).
  if (patch?.rateLimits !== undefined && !p.isPlatform) {
    fail('FORBIDDEN', 'Only platform principals may set rateLimits')
  }
}

export interface CreateTenantInput {
  code: string
  name: string
  status?: 'ACTIVE' | 'INACTIVE'
  auth_config?: AuthConfigPatch
  admin?: { email?: string; username?: string; cpf_cnpj?: string; password: string }
}

/** Normalizes the first admin's identifiers against the new tenant's config; VALIDATION_ERROR otherwise. */
function adminIdentifiers(admin: NonNullable<CreateTenantInput['admin']>, config: AuthConfig) {
  return newUserIdentifiers(admin, config.loginIdentifiers, 'body.admin')
}

/** POST /tenants: the tenant, its built-in roles and optionally its first admin, in one transaction. */
export async function createTenant(ctx: AppContext, p: Principal, input: CreateTenantInput) {
  // Why: creating a tenant acts outside the caller's own tenant, which only platform principals may do.
  if (!p.isPlatform) fail('FORBIDDEN', 'Only platform principals may create tenants')
  assertMaySetRateLimits(p, input.auth_config)
  assertEmailConfigPatch(input.auth_config, 'body.auth_config')
  const config = mergeAuthConfig(defaultAuthConfig(), input.auth_config)
  config.branding = completeBranding(config.branding)
  assertBrandingConfig(config.branding, 'body.auth_config')
  assertWebauthnConfig(config.webauthn, 'body.auth_config')
  assertOAuthConfig(config.oauth, 'body.auth_config')
  let admin: Parameters<typeof provisionTenant>[1]['admin']
  if (input.admin) {
    const ids = adminIdentifiers(input.admin, config)
    const failedRules = checkPassword(input.admin.password, config.passwordPolicy)
    if (failedRules.length > 0) fail('PASSWORD_POLICY_VIOLATION', undefined, failedRules)
    // Why check first: a taken code must not cost a bcrypt hash.
    if (await findTenantByCode(ctx.dbs.main, input.code)) fail('TENANT_ALREADY_EXISTS')
    admin = { ...ids, passwordHash: await ctx.hasher.hash(input.admin.password) }
  }
  try {
    const alg = config.signingAlgorithm
    const { tenant, adminUserId } = await provisionTenant(
      ctx.dbs.main,
      { code: input.code, name: input.name, status: input.status, authConfig: config, admin },
      // A tenant created asymmetric gets its first key pair in the same transaction.
      alg === 'HS256' ? undefined : (trx, tenantId) => installFirstKeyPair(ctx, trx, tenantId, alg),
    )
    await ctx.changed({ tenant: tenant.id })
    const dto = toTenantDto({ ...tenant, db_host: null, db_name: null })
    return adminUserId === undefined ? dto : { ...dto, adminUserId }
  } catch (err) {
    if (isUniqueViolation(err)) fail('TENANT_ALREADY_EXISTS')
    throw err
  }
}

/**
 * PATCH /tenants/:id (name, status). A status change reaches login, refresh and token checks on this
 * instance at once (caches dropped) and on others within their 2 s cache lifetime. INACTIVE also revokes
 * every session and refresh token of the tenant in the same transaction; ACTIVE again revives none.
 */
export async function updateTenant(
  ctx: AppContext,
  p: Principal,
  tenantId: string,
  input: { name?: string; status?: 'ACTIVE' | 'INACTIVE' },
) {
  assertTenantScope(p, tenantId)
  const before = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  // Why: an inactive platform tenant would lock every operator (and the bootstrap key) out.
  if (before.isPlatform && input.status === 'INACTIVE') {
    fail('SYSTEM_RESOURCE_PROTECTED', 'The platform tenant cannot be deactivated')
  }
  const now = new Date(ctx.clock.now())
  const updated = await retryOnContention(() =>
    ctx.dbs.main.transaction().execute(async (trx) => {
      const row = await updateTenantRow(trx, tenantId, input, now)
      if (row && input.status === 'INACTIVE') {
        const revoke = (t: Transaction<Database>) => revokeTenantSessions(t, tenantId, 'tenant_inactive', now)
        // Why nested for a routed tenant: its sessions live in another database. That revocation commits
        // just before the status change; should the status change then fail, the tenant stays ACTIVE with
        // its sessions ended, never INACTIVE with them alive.
        if (ctx.dbs.routedFor(tenantId)) await ctx.dbs.forTenant(tenantId).transaction().execute(revoke)
        else await revoke(trx)
      }
      return row
    }),
  )
  if (!updated) fail('TENANT_NOT_FOUND')
  // Why Client Keys too: the key verifier caches whether a key's tenant is active.
  await ctx.changed({ tenant: tenantId, clientKeys: true })
  return tenantDto(ctx, tenantId)
}

/** The `email` fields that say where mailed links point: whoever sets them could collect the tokens. */
const LINK_FIELDS = ['resetUrl', 'verifyUrl'] as const

/** True when `email` (a patch's) moves a mailed link away from what `current` says. */
function movesMailLinks(email: unknown, current: { resetUrl: string | null; verifyUrl: string | null }) {
  if (typeof email !== 'object' || email === null) return false
  return LINK_FIELDS.some((f) => f in email && (email as Record<string, unknown>)[f] !== current[f])
}

/**
 * Whether the caller may move the mailed links: a user with a recent sign-in, or a key no user stands behind
 * (the operator's). A key made by a user is refused: it has no sign-in to check, and the links would hand it
 * every reset token of the tenant, its own users' included (contract section 26). Checked before the
 * transaction (the check reads the session), applied under the tenant's lock.
 */
async function mayMoveMailLinks(ctx: AppContext, p: Principal): Promise<AppError | null> {
  if (p.kind === 'client_key' && usersBehind(p).length > 0) {
    return new AppError('FORBIDDEN', 'A Client Key made by a user cannot move the mailed links; sign in')
  }
  return requireRecentSignIn(ctx, p).then(
    () => null,
    (err: unknown) => {
      if (err instanceof AppError) return err
      throw err
    },
  )
}

/**
 * PATCH /tenants/:id/config: merges the patch key by key (nested objects too; arrays replaced). Moving the
 * mailed links (`email.resetUrl`, `email.verifyUrl`) needs a recent sign-in (contract section 26). A success
 * writes one TENANT_CONFIG_UPDATE row (section 25) in the tenant's log, and in the caller's when it acts from
 * another tenant: the top-level keys set, never their values. Every refusal's row, the permission gate's and
 * the validator's included, is the administrative-events hook's (`x-audit` with `refusalsOnly`).
 */
export async function updateTenantConfig(
  ctx: AppContext,
  p: Principal,
  tenantId: string,
  patch: AuthConfigPatch,
  meta: RequestMeta,
): Promise<AuthConfig> {
  const row = {
    action: 'TENANT_CONFIG_UPDATE' as const,
    success: true,
    actor: p,
    metadata: { target: { type: 'tenant' as const, id: tenantId }, changed: Object.keys(patch).sort() },
    meta,
  }
  const logs = async () => {
    // Why only a tenant that exists: an unknown id (or another tenant's, for a tenant admin) has no log.
    const target = (await ctx.tenants.byId(tenantId)) && (isSuperAdmin(p) || tenantId === p.tenantId)
    const ids = new Set(target ? [tenantId, p.tenantId] : [p.tenantId])
    for (const id of ids) await writeAudit(ctx.dbs.forTenant(id), { tenantId: id, ...row })
  }
  assertTenantScope(p, tenantId)
  assertMaySetRateLimits(p, patch)
  assertEmailConfigPatch(patch)
  // Why asked whenever the patch names a link, and judged under the lock: the cache may be behind the row.
  const refusal = typeof patch.email === 'object' ? await mayMoveMailLinks(ctx, p) : null
  const merged = await ctx.dbs.main.transaction().execute(async (trx) => {
    const locked = (await lockTenant(trx, tenantId)) ?? fail('TENANT_NOT_FOUND')
    const before = resolveAuthConfig(locked.auth_config)
    if (refusal && movesMailLinks(patch.email, before.email)) throw refusal
    const next = mergeAuthConfig(before, patch)
    next.branding = completeBranding(next.branding)
    // Checked whole, after the merge: a patch of `origins` alone must still fit the stored `rpId`.
    assertWebauthnConfig(next.webauthn, 'body')
    assertBrandingConfig(next.branding, 'body')
    assertOAuthConfig(next.oauth, 'body')
    await setAuthConfig(trx, tenantId, next, new Date(ctx.clock.now()))
    // A new signing algorithm takes its key now; the former key keeps verifying for 7 days.
    await switchSigningAlgorithm(ctx, trx, tenantId, before.signingAlgorithm, next.signingAlgorithm)
    return next
  })
  await ctx.changed({ tenant: tenantId, signing: tenantId })
  await logs()
  return merged
}

/**
 * DELETE /tenants/:id: users, roles, permissions, sessions, Client Keys, secrets and routing go (in the
 * tenant's routed database too); audit rows stay. The platform tenant is protected.
 */
export async function deleteTenant(ctx: AppContext, p: Principal, tenantId: string) {
  assertTenantScope(p, tenantId)
  const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  if (tenant.isPlatform) fail('SYSTEM_RESOURCE_PROTECTED', 'The platform tenant cannot be deleted')
  const deleted = await ctx.routing.deleteTenant(tenantId)
  if (!deleted) fail('TENANT_NOT_FOUND')
  // Why all entries: a code cached to this id would hide a new tenant created with the same code.
  await ctx.changed({ tenant: '*', signing: tenantId, clientKeys: true })
  return { id: tenantId, deleted: true as const }
}

/**
 * PUT /tenants/:id/database: moves the tenant's rows to the database at `url` (see routing/). Platform
 * principals only; the platform tenant stays in the main database.
 */
export async function setTenantDatabase(ctx: AppContext, p: Principal, tenantId: string, url: string | null) {
  // Contract 7: a tenant admin is FORBIDDEN for its own tenant and TENANT_NOT_FOUND for another.
  if (!p.isPlatform) fail(tenantId === p.tenantId ? 'FORBIDDEN' : 'TENANT_NOT_FOUND')
  if (!isSuperAdmin(p) && tenantId !== p.tenantId) fail('TENANT_NOT_FOUND')
  const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  // Why: bootstrap and the operators' own credentials read the platform tenant from the main database.
  if (tenant.isPlatform) fail('DATABASE_ROUTING_FAILED', 'The platform tenant stays in the main database')
  return ctx.routing.setDatabase(tenantId, url)
}
