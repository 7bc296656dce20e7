import type { components } from '../../../generated/openapi.js'
import { tdb, type AppContext } from '../../context.js'
import type { PublishableKeyStatus } from '../../db/database.js'
import type { PageParams } from '../../db/paginate.js'
import { AppError, fail } from '../../errors.js'
import { randomToken } from '../../lib/tokens.js'
import type { Principal } from '../../security/principal.js'
import * as q from './queries.js'
import { assertGivableDefaultRoles } from './roles.js'

type Schemas = components['schemas']
type PublishableKeyDto = Schemas['PublishableKey']
type CreateBody = Schemas['CreatePublishableKeyRequest']
type UpdateBody = Schemas['UpdatePublishableKeyRequest']

const DEFAULT_SIGNUPS_PER_HOUR = 100
const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])

/** A key row as the API shows it, value included (it is public). */
function toDto(r: q.PublishableKeyRow): PublishableKeyDto {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    key: r.key,
    allowedOrigins: asList(r.allowed_origins),
    defaultRoles: asList(r.default_roles),
    signupsPerHour: r.signups_per_hour,
    status: r.status,
    createdAt: new Date(r.created_at).toISOString(),
    createdBy: r.created_by,
    revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at).toISOString(),
  }
}

/** True for a host a browser treats as this machine: `localhost`, `127.0.0.0/8`, `[::1]`. */
function isLoopbackHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === '[::1]'
  )
}

/**
 * The origins in serialized form (lowercase, default port dropped, deduplicated); VALIDATION_ERROR for
 * one that is not `https://`, or `http://` on a loopback host (a page served over plain HTTP elsewhere
 * could be changed on its way, key and all).
 */
function canonicalOrigins(list: readonly string[]): string[] {
  const issues: { path: string; message: string }[] = []
  const out = list.map((o, i) => {
    let u: URL | null = null
    try {
      u = new URL(o)
    } catch {
      u = null
    }
    const ok =
      u !== null &&
      (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname))) &&
      u.origin !== 'null'
    if (!ok || !u)
      issues.push({
        path: `body.allowedOrigins.${i}`,
        message: 'must be https://, or http:// on a loopback host',
      })
    return u?.origin ?? o
  })
  if (issues.length > 0) throw new AppError('VALIDATION_ERROR', 'Request validation failed', issues)
  return [...new Set(out)]
}

/** A fresh key value: `pk_` and 43 base64url characters (256 random bits). */
function newPublishableKeyValue(): string {
  return `pk_${randomToken(32)}`
}

/** POST /publishable-keys: a key of the caller's tenant, its default roles checked (roles.ts), its creating user kept. */
export async function createPublishableKey(
  ctx: AppContext,
  actor: Principal,
  body: CreateBody,
): Promise<PublishableKeyDto> {
  const allowedOrigins = canonicalOrigins(body.allowedOrigins)
  const defaultRoles = [...new Set(body.defaultRoles ?? [])]
  await assertGivableDefaultRoles(tdb(ctx, actor), actor, defaultRoles)
  const row = await q.insertPublishableKey(ctx.dbs.main, {
    tenantId: actor.tenantId,
    name: body.name,
    key: newPublishableKeyValue(),
    allowedOrigins,
    defaultRoles,
    signupsPerHour: body.signupsPerHour ?? DEFAULT_SIGNUPS_PER_HOUR,
    // Why not a key's behalf user: createdBy names who acted, and a Client Key is no user.
    createdBy: actor.kind === 'user' ? actor.userId : null,
  })
  // Why this cannot happen in practice: a fresh value has 256 random bits; the unique index guards anyway.
  if (!row) throw new Error('publishable key value collision')
  // Why: a preflight cached "no key allows this origin" a moment ago; the new key's page works at once.
  await ctx.changed({ clientKeys: true })
  return toDto(row)
}

/** GET /publishable-keys: the caller's tenant's keys, newest first. */
export async function listPublishableKeys(
  ctx: AppContext,
  actor: Principal,
  p: PageParams & { status?: PublishableKeyStatus },
) {
  const page = await q.listPublishableKeys(ctx.dbs.main, actor.tenantId, p.status, p)
  return { ...page, items: page.items.map(toDto) }
}

/** GET /publishable-keys/:id: one key of the caller's tenant; CLIENT_KEY_NOT_FOUND otherwise. */
export async function getPublishableKey(ctx: AppContext, actor: Principal, id: string) {
  return toDto((await q.findPublishableKey(ctx.dbs.main, actor.tenantId, id)) ?? fail('CLIENT_KEY_NOT_FOUND'))
}

/** PATCH /publishable-keys/:id: the given fields, under the rules of creation; at once on every instance. */
export async function updatePublishableKey(ctx: AppContext, actor: Principal, id: string, body: UpdateBody) {
  if (!(await q.findPublishableKey(ctx.dbs.main, actor.tenantId, id))) fail('CLIENT_KEY_NOT_FOUND')
  const allowedOrigins = body.allowedOrigins ? canonicalOrigins(body.allowedOrigins) : undefined
  const defaultRoles = body.defaultRoles ? [...new Set(body.defaultRoles)] : undefined
  if (defaultRoles) await assertGivableDefaultRoles(tdb(ctx, actor), actor, defaultRoles)
  const row =
    (await q.updatePublishableKey(ctx.dbs.main, actor.tenantId, id, {
      name: body.name,
      allowedOrigins,
      defaultRoles,
      signupsPerHour: body.signupsPerHour,
    })) ?? fail('CLIENT_KEY_NOT_FOUND')
  await ctx.changed({ clientKeys: true })
  return toDto(row)
}

/** POST /publishable-keys/:id/revoke: idempotent; sign-ups with it are refused at once here, soon elsewhere. */
export async function revokePublishableKey(ctx: AppContext, actor: Principal, id: string) {
  const row =
    (await q.revokePublishableKey(ctx.dbs.main, actor.tenantId, id, new Date(ctx.clock.now()))) ??
    fail('CLIENT_KEY_NOT_FOUND')
  await ctx.changed({ clientKeys: true })
  return toDto(row)
}
