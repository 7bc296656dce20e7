// The one request helper of the inject-based tests. (Tests of a spawned service over real HTTP use
// test/helpers/service-process.ts instead.)
import type { FastifyInstance } from 'fastify'
import { freshIp, PASSWORD, type UserFx } from './fixtures.js'

/**
 * Who makes a request and from where: an access token (`Authorization: Bearer`), a Client Key by
 * `X-Client-Key`, a Client Key as `Authorization: Bearer ck_...`, or nothing. `ip` is the client address
 * (a fresh private one by default, so a file's requests never share a per-IP budget); `headers` are sent
 * as given, under the credential headers.
 */
export interface As {
  token?: string
  key?: string
  bearerKey?: string
  ip?: string
  headers?: Record<string, string>
}

/** A response: the status, the parsed envelope (and its `code` and `data`), the raw text and the headers. */
export interface Res {
  status: number
  /* eslint-disable @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes field by field */
  body: any
  data: any
  /* eslint-enable @typescript-eslint/no-explicit-any */
  code: string | undefined
  raw: string
  headers: Record<string, string | string[] | number | undefined>
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * One request through `app.inject`. `url` is the path as the document names it (`/api/v1/roles/...`);
 * `body` is sent as JSON when given. A body that is not JSON comes back in `raw` only.
 */
export async function call(
  app: FastifyInstance,
  method: Method,
  url: string,
  as: As | null = {},
  body?: unknown,
): Promise<Res> {
  const headers: Record<string, string> = { ...as?.headers }
  if (as?.token) headers.authorization = `Bearer ${as.token}`
  if (as?.bearerKey) headers.authorization = `Bearer ${as.bearerKey}`
  if (as?.key) headers['x-client-key'] = as.key
  const res = await app.inject({
    method,
    url,
    headers,
    remoteAddress: as?.ip ?? freshIp(),
    ...(body === undefined ? {} : { payload: body as object }),
  })
  let parsed: unknown
  try {
    parsed = res.body ? JSON.parse(res.body) : undefined
  } catch {
    parsed = undefined
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see Res
  const envelope = parsed as any
  return {
    status: res.statusCode,
    body: envelope,
    data: envelope?.data,
    code: envelope?.code,
    raw: res.body,
    headers: res.headers,
  }
}

/** login (POST /api/v1/login) with the fixture password or another; from a fresh address unless `ip` is given. */
export function login(
  app: FastifyInstance,
  tenantCode: string,
  identifier: string,
  password = PASSWORD,
  ip?: string,
): Promise<Res> {
  return call(app, 'POST', '/api/v1/login', { ip }, { tenantCode, identifier, password })
}

/** Logs a fixture user in (fixture password, fresh address) and returns its tokens; throws unless 200. */
export async function loginTokens(
  app: FastifyInstance,
  user: UserFx,
): Promise<{ accessToken: string; refreshToken: string }> {
  const res = await login(app, user.tenant.code, user.email)
  if (res.status !== 200) throw new Error(`login failed: ${res.raw}`)
  return res.data
}
