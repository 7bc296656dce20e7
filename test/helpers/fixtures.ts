import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { UserStatus } from '../../src/db/database.js'
import { issueAccessToken } from '../../src/auth/access-token.js'
import { provisionTenant } from '../../src/modules/tenants/provision.js'
import { loadGrants } from '../../src/modules/permissions/effective.js'
import { insertClientKey } from '../../src/modules/client-keys/queries.js'

export const PASSWORD = 'Tessera-fixture-pass-9'

let hashOnce: Promise<string> | undefined
/** One bcrypt cost-12 hash of PASSWORD per process: fixtures must not pay 250 ms per user. */
function passwordHash(app: FastifyInstance): Promise<string> {
  hashOnce ??= app.ctx.hasher.hash(PASSWORD)
  return hashOnce
}

export interface TenantFx {
  id: string
  code: string
}

/** A fresh tenant with its built-in roles; `authConfig` is merged over the defaults. */
export async function createTenant(
  app: FastifyInstance,
  authConfig: Record<string, unknown> = {},
): Promise<TenantFx> {
  const code = `t-${randomUUID().slice(0, 8)}`
  const { tenant } = await provisionTenant(app.ctx.dbs.main, { code, name: `Tenant ${code}`, authConfig })
  return { id: tenant.id, code: tenant.code }
}

export interface UserFx {
  id: string
  email: string
  tenant: TenantFx
}

/** A user with PASSWORD, the given roles (names) and direct permission grants (names). */
export async function createUser(
  app: FastifyInstance,
  tenant: TenantFx,
  opts: {
    email?: string
    username?: string
    roles?: string[]
    permissions?: string[]
    status?: UserStatus
  } = {},
): Promise<UserFx> {
  const db = app.ctx.dbs.forTenant(tenant.id)
  const email = opts.email ?? `u-${randomUUID().slice(0, 8)}@example.test`
  const user = await db
    .insertInto('users')
    .values({
      tenant_id: tenant.id,
      email: email.toLowerCase(),
      username: opts.username ?? null,
      password_hash: await passwordHash(app),
      status: opts.status ?? 'ACTIVE',
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const name of opts.roles ?? []) {
    const role = await db
      .selectFrom('roles')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .where('name', '=', name)
      .executeTakeFirstOrThrow()
    await db
      .insertInto('user_roles')
      .values({ tenant_id: tenant.id, user_id: user.id, role_id: role.id })
      .execute()
  }
  for (const name of opts.permissions ?? []) {
    const perm = await db
      .selectFrom('permissions')
      .select('id')
      .where('name', '=', name)
      .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenant.id)]))
      .executeTakeFirstOrThrow()
    await db
      .insertInto('user_permissions')
      .values({ tenant_id: tenant.id, user_id: user.id, permission_id: perm.id })
      .execute()
  }
  return { id: user.id, email: email.toLowerCase(), tenant }
}

/** An access token for a user as login would issue it now (roles and permissions from the database). */
export async function tokenFor(app: FastifyInstance, user: UserFx, lifetimeSeconds = 900): Promise<string> {
  const { ctx } = app
  const tenant = await ctx.tenants.byId(user.tenant.id)
  if (!tenant) throw new Error('tenant missing')
  const grants = await loadGrants(ctx.dbs.forTenant(tenant.id), tenant.id, user.id, tenant.isPlatform)
  const { accessToken } = await issueAccessToken(
    ctx.keystore,
    {
      userId: user.id,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      email: user.email,
      username: null,
      roles: grants.roles,
      permissions: grants.permissions,
      sessionId: randomUUID(),
    },
    lifetimeSeconds,
    ctx.clock.now(),
  )
  return accessToken
}

/** A Client Key of the tenant with these scopes; returns its value. */
export async function createKey(
  app: FastifyInstance,
  tenant: TenantFx,
  scopes: string[],
  extra: { ipAllowlist?: string[]; originAllowlist?: string[]; expiresAt?: Date } = {},
): Promise<{ id: string; value: string }> {
  const created = await insertClientKey(app.ctx.dbs.main, {
    tenantId: tenant.id,
    name: 'fixture',
    scopes,
    ...extra,
  })
  if (!created) throw new Error('key not created')
  return created
}

/** A distinct client address per call, so login tests do not share the 5/min login budget. */
export function freshIp(): string {
  const n = Math.floor(Math.random() * 250) + 1
  const m = Math.floor(Math.random() * 250) + 1
  return `10.${n}.${m}.${Math.floor(Math.random() * 250) + 1}`
}
