import type { FastifyInstance } from 'fastify'
import { PLATFORM_KEY } from '../helpers/app.js'
import { createUser, freshIp, PASSWORD, tokenFor, type TenantFx, type UserFx } from '../helpers/fixtures.js'

/** How a test request authenticates: a bearer token, a Client Key, or nothing. */
export interface As {
  token?: string
  key?: string
  ip?: string
}

/** The platform Client Key (admin:*). */
export const platformKey: As = { key: PLATFORM_KEY }

/** One API call; returns status and parsed body. */
export async function call(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  as: As = {},
  body?: unknown,
) {
  const headers: Record<string, string> = {}
  if (as.token) headers.authorization = `Bearer ${as.token}`
  if (as.key) headers['x-client-key'] = as.key
  const res = await app.inject({
    method,
    url: `/api/v1${url}`,
    headers,
    remoteAddress: as.ip ?? freshIp(),
    ...(body === undefined ? {} : { payload: body as object }),
  })
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are checked field by field
  return { status: res.statusCode, body: res.json() as any }
}

/** The platform tenant as a fixture. */
export async function platformTenant(app: FastifyInstance): Promise<TenantFx> {
  const p = await app.ctx.tenants.byCode(app.ctx.config.platformTenantCode)
  if (!p) throw new Error('platform tenant missing')
  return { id: p.id, code: p.code }
}

/** A user with the given roles and its access token. */
export async function userWithToken(
  app: FastifyInstance,
  tenant: TenantFx,
  roles: string[] = ['admin'],
  extra: { permissions?: string[]; email?: string } = {},
): Promise<{ user: UserFx; as: As }> {
  const user = await createUser(app, tenant, { roles, ...extra })
  return { user, as: { token: await tokenFor(app, user) } }
}

/** POST /login with the fixture password (or another); from a fresh address unless `ip` is given. */
export function login(
  app: FastifyInstance,
  tenantCode: string,
  identifier: string,
  password = PASSWORD,
  ip?: string,
) {
  return call(app, 'POST', '/login', { ip }, { tenantCode, identifier, password })
}
