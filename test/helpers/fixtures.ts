import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { AuditAction, Database, UserStatus } from '../../src/db/database.js'
import { issueAccessToken } from '../../src/security/access-token.js'
import { provisionTenant } from '../../src/modules/tenants/provision.js'
import { loadGrants } from '../../src/modules/permissions/grant-queries.js'
import { insertClientKey } from '../../src/modules/client-keys/queries.js'
import { PLATFORM_KEY, type TestLike } from './app.js'
import { openTestDatabase, type TestDatabase } from './db.js'
import { call, type As } from './call.js'

export const PASSWORD = 'Tessera-fixture-pass-9'

/**
 * bcrypt hashes of PASSWORD (@node-rs/bcrypt, as the service's hasher makes them), by cost, kept as literals:
 * a fixture user costs no hash. A fixture user's hash has the app's own cost (4 in most tests, 12 where
 * buildTestApp is given `passwordCost: 12`), so a login verifies at the cost the app's unknown-identifier
 * verify spends; were a literal wrong, every test that logs a fixture user in fails.
 */
const PASSWORD_HASHES: Readonly<Record<number, string>> = {
  4: '$2y$04$cVjGZsoP.7p1BpOjP8gjSOIfGo8awtqKHik0ABSYFwtgl6BVYOzla',
  12: '$2y$12$WWsN2jmMF2iqKP2XND7n..tOnVaQ3FD60KnxlOx5.QkQFnNU/Rs66',
}

/** The fixture hash of PASSWORD at the app's bcrypt cost. */
function passwordHashFor(app: FastifyInstance): string {
  const hash = PASSWORD_HASHES[app.ctx.hasher.cost]
  if (!hash) throw new Error(`no fixture hash at bcrypt cost ${app.ctx.hasher.cost}`)
  return hash
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

/**
 * Marks a tenant INACTIVE straight in the database, as the platform's deactivation leaves it, and drops the
 * app's cached copy so the next request sees it.
 */
export async function deactivateTenant(app: FastifyInstance, tenantId: string): Promise<void> {
  await app.ctx.dbs.main
    .updateTable('tenants')
    .set({ status: 'INACTIVE' })
    .where('id', '=', tenantId)
    .execute()
  app.ctx.tenants.invalidate(tenantId)
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
      password_hash: passwordHashFor(app),
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
    const permissionId = await permissionIdOf(db, tenant.id, name)
    await db
      .insertInto('user_permissions')
      .values({ tenant_id: tenant.id, user_id: user.id, permission_id: permissionId })
      .execute()
  }
  return { id: user.id, email: email.toLowerCase(), tenant }
}

/** The id of a permission the tenant can grant: a system one or its own custom one. */
async function permissionIdOf(db: Kysely<Database>, tenantId: string, name: string): Promise<string> {
  const perm = await db
    .selectFrom('permissions')
    .select('id')
    .where('name', '=', name)
    .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
    .executeTakeFirstOrThrow()
  return perm.id
}

/**
 * An access token for a user as login would issue it now (roles and permissions from the database).
 * `authTime` (seconds since the epoch) defaults to now, a fresh sign-in; null leaves the claim out, as a
 * token minted elsewhere with the tenant's secret would.
 */
export async function tokenFor(
  app: FastifyInstance,
  user: UserFx,
  lifetimeSeconds = 900,
  opts: { authTime?: number | null } = {},
): Promise<string> {
  const { ctx } = app
  const tenant = await ctx.tenants.byId(user.tenant.id)
  if (!tenant) throw new Error('tenant missing')
  const grants = await loadGrants(ctx.dbs.forTenant(tenant.id), tenant.id, user.id, tenant.isPlatform)
  const authTime = opts.authTime === undefined ? Math.floor(ctx.clock.now() / 1000) : opts.authTime
  // Why a session row: a recent sign-in counts only when `sid` names a live session of the user opened at
  // `auth_time` (contract section 26), as a login's token does; a token with no `auth_time` gets none.
  const sessionId = authTime === null ? randomUUID() : await openSession(app, user, authTime)
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
      sessionId,
      authTime,
    },
    lifetimeSeconds,
    ctx.clock.now(),
  )
  return accessToken
}

/** A live session row of the user, opened at `authTime` (seconds since the epoch), as a login opens one. */
async function openSession(app: FastifyInstance, user: UserFx, authTime: number): Promise<string> {
  const openedAt = new Date(authTime * 1000)
  const row = await app.ctx.dbs
    .forTenant(user.tenant.id)
    .insertInto('sessions')
    .values({
      tenant_id: user.tenant.id,
      user_id: user.id,
      created_at: openedAt,
      last_used_at: openedAt,
      expires_at: new Date(app.ctx.clock.now() + 86_400_000),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/**
 * Routes the tenant to a fresh, empty PostgreSQL database of its own through the API (closed in teardown);
 * the app must allow 127.0.0.1 (`DATABASE_ROUTING_ALLOWED_HOSTS`).
 */
export async function routeToOwnDatabase(
  t: TestLike,
  app: FastifyInstance,
  tenant: TenantFx,
): Promise<TestDatabase> {
  const target = await openTestDatabase('postgres', { empty: true })
  t.teardown(() => target.close())
  // Why a password: routing refuses URLs without one (the test server trusts local connections).
  const url = new URL(target.url)
  url.password = 'unused-by-the-test-server'
  const res = await call(app, 'setTenantDatabase', platformKey, {
    params: { id: tenant.id },
    body: { url: url.toString() },
  })
  if (res.status !== 200) throw new Error(`routing failed: ${res.raw}`)
  return target
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

/** The platform Client Key (admin:*) as a credential: the bootstrap key every test app has. */
export const platformKey: As = { key: PLATFORM_KEY }

/** The platform tenant (the one the bootstrap created) as a fixture. */
export async function platformTenant(app: FastifyInstance): Promise<TenantFx> {
  const p = await app.ctx.tenants.byCode(app.ctx.config.platformTenantCode)
  if (!p) throw new Error('platform tenant missing')
  return { id: p.id, code: p.code }
}

/**
 * A user (createUser's options: roles, none unless given, direct grants, status...) and an access token
 * of it, as `token` and as the credential `cred` (signed in now unless `authTime` says otherwise; see
 * tokenFor).
 */
export async function userWithToken(
  app: FastifyInstance,
  tenant: TenantFx,
  opts: Parameters<typeof createUser>[2] & { authTime?: number | null } = {},
): Promise<UserFx & { token: string; cred: As }> {
  const user = await createUser(app, tenant, opts)
  const token = await tokenFor(app, user, 900, { authTime: opts.authTime })
  return { ...user, token, cred: { token } }
}

/** A user's row (every column), straight from the database; throws when there is none. */
export function userRow(app: FastifyInstance, tenantId: string, userId: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirstOrThrow()
}

/** The user's sessions that are not revoked (their ids), straight from the database. */
export function activeSessions(app: FastifyInstance, user: UserFx): Promise<{ id: string }[]> {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('sessions')
    .select('id')
    .where('user_id', '=', user.id)
    .where('revoked_at', 'is', null)
    .execute()
}

/** The session id (`sid` claim) an access token carries. */
export function sidOf(accessToken: string): string {
  const payload = accessToken.split('.')[1] ?? ''
  const sid: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')).sid
  if (typeof sid !== 'string') throw new Error('no sid in the access token')
  return sid
}

/** A Client Key of the tenant with these scopes, as a credential. */
export async function keyCred(app: FastifyInstance, tenant: TenantFx, scopes: string[]): Promise<As> {
  return { key: (await createKey(app, tenant, scopes)).value }
}

/** The tenant's audit rows of one action, oldest first. */
export function auditRows(app: FastifyInstance, tenantId: string, action: AuditAction) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('tessera_audit.audit_log')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('action', '=', action)
    .orderBy('created_at', 'asc')
    .execute()
}

/** A role of the tenant by name (id and level), straight from the database. */
export function roleByName(app: FastifyInstance, tenantId: string, name: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('roles')
    .select(['id', 'name', 'level'])
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
}

/** Creates a custom role directly (id returned), with permission names that exist as rows. */
export async function insertRole(
  app: FastifyInstance,
  tenant: TenantFx,
  name: string,
  level: number,
  permissions: string[] = [],
): Promise<string> {
  const db = app.ctx.dbs.forTenant(tenant.id)
  const role = await db
    .insertInto('roles')
    .values({ tenant_id: tenant.id, name, level, description: null })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const name of permissions) {
    const permissionId = await permissionIdOf(db, tenant.id, name)
    await db
      .insertInto('role_permissions')
      .values({ tenant_id: tenant.id, role_id: role.id, permission_id: permissionId })
      .execute()
  }
  return role.id
}

/** An id no row has: for 404 tests. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

/** The shape of a Client Key value. */
export const KEY_SHAPE = /^ck_[A-Za-z0-9_-]{43,}$/

/** Polls `probe` every `everyMs` until it returns true or `timeoutMs` passes; returns the elapsed ms or -1. */
export async function waitFor(
  probe: () => Promise<boolean>,
  timeoutMs = 5000,
  everyMs = 50,
): Promise<number> {
  const start = Date.now()
  while (Date.now() - start <= timeoutMs) {
    if (await probe()) return Date.now() - start
    await new Promise((r) => setTimeout(r, everyMs))
  }
  return -1
}
