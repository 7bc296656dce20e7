import type { components } from '../../../generated/openapi.js'
import { requireRecentSignIn, tdb, type AppContext } from '../../context.js'
import type { ClientKeyStatus } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import {
  credentialPermissions,
  credentialUser,
  holds,
  isSuperAdmin,
  usersBehind,
  type Principal,
} from '../../security/principal.js'
import { isValidCidr } from '../../lib/cidr.js'
import { newClientKeyValue } from '../../lib/tokens.js'
import type { PageParams } from '../../db/paginate.js'
import * as q from './queries.js'
import { assertHoldsAll, assertMayGiveScopes, givableScopes, type KeyTenant } from './scopes.js'

type Schemas = components['schemas']
export type ClientKeyDto = Schemas['ClientKey']
export type ClientKeyWithSecretDto = Schemas['ClientKeyWithSecret']
type CreateBody = Schemas['CreateClientKeyRequest']
type UpdateBody = Schemas['UpdateClientKeyRequest']

const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])
const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())

/** A key row as the API shows it (`createdBy`: the creating user, else null); `EXPIRED` is derived from `expires_at` and `now` (never the value). */
export function toKeyDto(r: q.KeyRow, now: number): ClientKeyDto {
  const expiresAt = r.expires_at === null ? null : new Date(r.expires_at)
  const status: ClientKeyStatus =
    r.status === 'ACTIVE' && expiresAt !== null && expiresAt.getTime() <= now ? 'EXPIRED' : r.status
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    prefix: r.prefix,
    scopes: asList(r.scopes),
    ipAllowlist: asList(r.ip_allowlist),
    originAllowlist: asList(r.origin_allowlist),
    status,
    expiresAt: expiresAt === null ? null : expiresAt.toISOString(),
    lastUsedAt: iso(r.last_used_at),
    createdAt: new Date(r.created_at).toISOString(),
    revokedAt: iso(r.revoked_at),
    // Why only a user: `createdBy` names the user who made the key; a key's or the operator's is null.
    createdBy: r.created_by_type === 'user' ? r.created_by_id : null,
  }
}

type Issue = { path: string; message: string }

// Why a pattern on top of URL: `new URL` accepts paths, queries and credentials; an origin has none.
const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+\/?$/i

/** The serialized form of an origin (lowercase scheme and host, default port dropped), or null. */
function canonicalOrigin(s: string): string | null {
  if (!ORIGIN_SHAPE.test(s)) return null
  let u: URL
  try {
    u = new URL(s)
  } catch {
    return null
  }
  // Why: browsers serialize a non-special scheme's origin as given; Node reports it as the string 'null'.
  return u.origin === 'null' ? s.replace(/\/$/, '') : u.origin
}

/**
 * Checks what the schema cannot: `expiresAt` in the future, CIDR entries, origin entries. Returns the
 * values to store (origins in their serialized form); VALIDATION_ERROR lists every problem at once.
 */
function checkInput(
  now: number,
  b: { expiresAt?: string; ipAllowlist?: string[]; originAllowlist?: string[] },
): { expiresAt?: Date; ipAllowlist?: string[]; originAllowlist?: string[] } {
  const issues: Issue[] = []
  let expiresAt: Date | undefined
  if (b.expiresAt !== undefined) {
    expiresAt = new Date(b.expiresAt)
    if (!(expiresAt.getTime() > now))
      issues.push({ path: 'body.expiresAt', message: 'must be in the future' })
  }
  b.ipAllowlist?.forEach((c, i) => {
    if (!isValidCidr(c))
      issues.push({ path: `body.ipAllowlist.${i}`, message: 'must be an IPv4 or IPv6 CIDR range' })
  })
  const origins = b.originAllowlist?.map((o, i) => {
    const c = canonicalOrigin(o)
    if (c === null)
      issues.push({ path: `body.originAllowlist.${i}`, message: 'must be an origin (scheme://host[:port])' })
    return c ?? o
  })
  if (issues.length > 0) throw new AppError('VALIDATION_ERROR', 'Request validation failed', issues)
  return {
    expiresAt,
    ipAllowlist: b.ipAllowlist,
    originAllowlist: origins === undefined ? undefined : [...new Set(origins)],
  }
}

/** The tenant a new key goes to: the caller's, or (platform `admin:*` only) the one named. */
async function targetTenant(
  ctx: AppContext,
  actor: Principal,
  tenantId: string | undefined,
): Promise<KeyTenant> {
  if (tenantId === undefined || tenantId === actor.tenantId) {
    return { id: actor.tenantId, isPlatform: actor.isPlatform }
  }
  // Why 404 and not 403 for others: existence of another tenant is not revealed (docs/decisions.md D4).
  if (!isSuperAdmin(actor)) fail('TENANT_NOT_FOUND')
  const t = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  return { id: t.id, isPlatform: t.isPlatform }
}

const ownTenant = (actor: Principal): KeyTenant => ({ id: actor.tenantId, isPlatform: actor.isPlatform })

/** One key of the caller's tenant; CLIENT_KEY_NOT_FOUND for an unknown id or another tenant's. */
export async function ownKey(ctx: AppContext, actor: Principal, id: string): Promise<q.KeyRow> {
  return (await q.findKey(ctx.dbs.main, actor.tenantId, id)) ?? fail('CLIENT_KEY_NOT_FOUND')
}

/** POST /client-keys: creates a key and returns it with its value, which is never stored or shown again. */
export async function createClientKey(
  ctx: AppContext,
  actor: Principal,
  body: CreateBody,
): Promise<ClientKeyWithSecretDto> {
  const now = ctx.clock.now()
  const tenant = await targetTenant(ctx, actor, body.tenantId)
  const input = checkInput(now, body)
  await assertMayGiveScopes(ctx.dbs.forTenant(tenant.id), actor, tenant, body.scopes)
  const created = await q.insertClientKey(ctx.dbs.main, {
    tenantId: tenant.id,
    name: body.name,
    scopes: body.scopes,
    ipAllowlist: input.ipAllowlist,
    originAllowlist: input.originAllowlist,
    expiresAt: input.expiresAt ?? null,
    // Why null for the operator: the CLI acts with no user or key behind it.
    createdBy:
      actor.kind === 'user'
        ? { type: 'user', id: actor.userId }
        : actor.kind === 'client_key'
          ? { type: 'client_key', id: actor.keyId }
          : null,
    behalfUserId: credentialUser(actor),
    // Why the creating key's whole set: whoever holds that key's value gets this one too.
    behindUserIds: usersBehind(actor),
  })
  // Why this cannot happen in practice: a fresh value has 256 random bits; the unique hash guards anyway.
  if (!created) throw new Error('client key value collision')
  const row = await q.findKeyById(ctx.dbs.main, created.id)
  return { ...toKeyDto(row, now), key: created.value }
}

/** GET /client-keys/:id: one key of the caller's tenant. */
export async function getClientKey(ctx: AppContext, actor: Principal, id: string): Promise<ClientKeyDto> {
  return toKeyDto(await ownKey(ctx, actor, id), ctx.clock.now())
}

/**
 * True when `scopes` grants something the key's current scopes do not (read as the verifier reads them):
 * narrowing from a wildcard to one of its permissions adds nothing.
 */
function addsScopes(current: q.KeyRow, scopes: readonly string[], isPlatform: boolean): boolean {
  const held = credentialPermissions(asList(current.scopes), isPlatform)
  return scopes.some((s) => !holds(held, s))
}

/**
 * PATCH /client-keys/:id: name, scopes (containment rule), allowlists or expiry; takes effect at once on
 * this instance. Adding scopes needs a user caller's recent sign-in (contract section 26).
 */
export async function updateClientKey(
  ctx: AppContext,
  actor: Principal,
  id: string,
  body: UpdateBody,
): Promise<ClientKeyDto> {
  const now = ctx.clock.now()
  const input = checkInput(now, body)
  const current = await ownKey(ctx, actor, id)
  if (body.scopes !== undefined) {
    await assertMayGiveScopes(tdb(ctx, actor), actor, ownTenant(actor), body.scopes)
    // Why after the containment check: a scope the caller may not give is refused whatever its sign-in.
    if (addsScopes(current, body.scopes, actor.isPlatform)) await requireRecentSignIn(ctx, actor)
  }
  const row =
    (await q.updateKey(ctx.dbs.main, actor.tenantId, id, {
      name: body.name,
      scopes: body.scopes,
      ipAllowlist: input.ipAllowlist,
      originAllowlist: input.originAllowlist,
      expiresAt: input.expiresAt,
    })) ?? fail('CLIENT_KEY_NOT_FOUND')
  await ctx.changed({ clientKeys: true })
  return toKeyDto(row, now)
}

/**
 * POST /client-keys/:id/revoke: revokes a key (idempotent); refused at once here, on other instances as
 * soon as the change channel tells them (within the verifier's cache lifetime when it is down).
 */
export async function revokeClientKey(ctx: AppContext, actor: Principal, id: string): Promise<ClientKeyDto> {
  const now = ctx.clock.now()
  const row =
    (await q.revokeKey(ctx.dbs.main, actor.tenantId, id, new Date(now))) ?? fail('CLIENT_KEY_NOT_FOUND')
  await ctx.changed({ clientKeys: true })
  return toKeyDto(row, now)
}

/**
 * POST /client-keys/:id/rotate: issues a new value; the old one keeps working for `graceSeconds` (0: stops
 * at once). The caller must hold every scope of the key, since the new value hands those scopes to it, and
 * its users become users behind the key (both values see the new set at once on this instance).
 */
export async function rotateClientKey(
  ctx: AppContext,
  actor: Principal,
  id: string,
  graceSeconds: number,
): Promise<ClientKeyWithSecretDto> {
  const now = ctx.clock.now()
  const current = await ownKey(ctx, actor, id)
  assertHoldsAll(actor, asList(current.scopes))
  const value = newClientKeyValue()
  const graceUntil = graceSeconds > 0 ? new Date(now + graceSeconds * 1000) : null
  // Why the rotator's users join the key's: they receive the new value (a key rotating hands it to its own set).
  const row =
    (await q.rotateKey(ctx.dbs.main, actor.tenantId, id, value, graceUntil, usersBehind(actor))) ??
    fail('CLIENT_KEY_NOT_FOUND')
  await ctx.changed({ clientKeys: true })
  return { ...toKeyDto(row, now), key: value }
}

/** GET /client-keys/scopes: the scopes the caller could give a key of its own tenant. */
export async function listClientKeyScopes(ctx: AppContext, actor: Principal) {
  return { items: await givableScopes(tdb(ctx, actor), actor) }
}

interface PageQuery extends PageParams {
  status?: ClientKeyStatus
}

async function page(ctx: AppContext, tenantId: string | undefined, p: PageQuery, ids?: readonly string[]) {
  const now = ctx.clock.now()
  const keys = await q.listKeys(ctx.dbs.main, { tenantId, status: p.status, ids }, new Date(now), p)
  return { ...keys, items: keys.items.map((r) => toKeyDto(r, now)) }
}

/** GET /client-keys/tenant: the caller's tenant's keys, newest first; `ids` (checked by the document) narrows them. */
export function listTenantClientKeys(ctx: AppContext, actor: Principal, p: PageQuery & { ids?: string }) {
  // Why lowercased: ids are stored in lower case, and the document's pattern takes either.
  const ids = p.ids ? [...new Set(p.ids.toLowerCase().split(','))] : undefined
  return page(ctx, actor.tenantId, p, ids)
}

/** GET /client-keys: every tenant's keys (platform `admin:*` only), optionally of one tenant. */
export async function listClientKeys(
  ctx: AppContext,
  actor: Principal,
  p: PageQuery & { tenantId?: string },
) {
  // Why again here: the gate's check honours `admin:*` in any set; listing every tenant needs the platform.
  if (!isSuperAdmin(actor)) fail('FORBIDDEN', 'Missing permission admin:*')
  if (p.tenantId !== undefined && !(await ctx.tenants.byId(p.tenantId))) fail('TENANT_NOT_FOUND')
  return page(ctx, p.tenantId, p)
}
