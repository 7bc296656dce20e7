// Shared by the Users, Roles and Permissions tests: requests with a credential, and audit rows.
import type { FastifyInstance } from 'fastify'
import type { AuditAction } from '../../src/db/database.js'
import { createKey, createUser, freshIp, tokenFor, type TenantFx, type UserFx } from '../helpers/fixtures.js'

export type Cred = { token: string } | { key: string } | null

export interface Res {
  status: number
  code: string | undefined
  data: any // eslint-disable-line @typescript-eslint/no-explicit-any
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * One request under /api/v1 with a JWT or a Client Key. Each call comes from a fresh client address, so
 * a test file's requests never share the per-IP budget of 100 a minute.
 */
export async function call(
  app: FastifyInstance,
  cred: Cred,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  path: string,
  payload?: unknown,
): Promise<Res> {
  const headers: Record<string, string> = {}
  if (cred && 'token' in cred) headers.authorization = `Bearer ${cred.token}`
  if (cred && 'key' in cred) headers['x-client-key'] = cred.key
  const res = await app.inject({
    method,
    url: `/api/v1${path}`,
    headers,
    remoteAddress: freshIp(),
    ...(payload === undefined ? {} : { payload: payload as object }),
  })
  const body = res.body ? res.json() : undefined
  return { status: res.statusCode, code: body?.code, data: body?.data, body }
}

/** A user with these roles and direct grants, and a JWT carrying its permissions as issued now. */
export async function userWithToken(
  app: FastifyInstance,
  tenant: TenantFx,
  opts: { roles?: string[]; permissions?: string[]; email?: string; username?: string } = {},
): Promise<UserFx & { cred: { token: string } }> {
  const user = await createUser(app, tenant, opts)
  return { ...user, cred: { token: await tokenFor(app, user) } }
}

/** A Client Key of the tenant with these scopes, as a credential. */
export async function keyCred(
  app: FastifyInstance,
  tenant: TenantFx,
  scopes: string[],
): Promise<{ key: string }> {
  return { key: (await createKey(app, tenant, scopes)).value }
}

/** The tenant's audit rows of one action, oldest first. */
export function auditRows(app: FastifyInstance, tenantId: string, action: AuditAction) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('audit_log')
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
  for (const p of permissions) {
    const perm = await db
      .selectFrom('permissions')
      .select('id')
      .where('name', '=', p)
      .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenant.id)]))
      .executeTakeFirstOrThrow()
    await db
      .insertInto('role_permissions')
      .values({ tenant_id: tenant.id, role_id: role.id, permission_id: perm.id })
      .execute()
  }
  return role.id
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
