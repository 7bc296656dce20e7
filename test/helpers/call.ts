// The one request helper of the inject-based tests. (Tests of a spawned service over real HTTP use
// test/helpers/service-process.ts instead.)
//
// `call(app, operationId, as, { params, query, body })` is typed by the document: the operationId picks
// the method and path from generated/openapi.json, and generated/openapi.ts types the path parameters,
// the query, the body and the success `data`, so a misspelt field fails `tsc`. A test that must send
// what the document forbids says so: `unchecked(value)` for a body, query or parameter of the wrong
// shape (the operation and the typed response stay), or `callRaw` for a method, path or payload no
// operation has.
import type { FastifyInstance } from 'fastify'
import type { components, operations } from '../../generated/openapi.js'
import document from '../../generated/openapi.json' with { type: 'json' }
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

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
export type OperationId = keyof operations
type ErrorCode = components['schemas']['ErrorCode']
type Op<K extends OperationId> = operations[K]

// --- the request -------------------------------------------------------------------------------------

type PathParams<K extends OperationId> = Op<K>['parameters'] extends { path: infer P } ? P : never
type Query<K extends OperationId> = NonNullable<Op<K>['parameters']['query']>
/** The JSON body an operation takes (for wrappers that pass one through). */
export type BodyOf<K extends OperationId> =
  NonNullable<Op<K>['requestBody']> extends { content: { 'application/json': infer B } }
    ? Loosen<K, B>
    : never

/**
 * The request fields that have a `default` in the document. openapi-typescript types a property with a
 * default as required (its `defaultNonNullable`), which is right for a response and wrong for a request:
 * a request may leave it out. These three are all the document has (a field added with a default
 * shows up here as a test that cannot leave it out).
 */
interface Defaulted {
  createRole: 'level'
  resetUserPassword: 'revokeSessions'
  rotateClientKey: 'gracePeriodSeconds'
}
type Loosen<K extends OperationId, B> = K extends keyof Defaulted
  ? Omit<B, Defaulted[K]> & Partial<Pick<B, Defaulted[K] & keyof B>>
  : B

/**
 * What an operation takes besides the credential: `params` when its path has parameters (then
 * required), `query` when it declares any, `body` when it takes one (required when the document
 * requires it). A key the operation does not have is a type error.
 */
export type Req<K extends OperationId> = ([PathParams<K>] extends [never]
  ? { params?: never }
  : { params: PathParams<K> }) &
  ([Query<K>] extends [never] ? { query?: never } : { query?: Query<K> }) &
  ([BodyOf<K>] extends [never]
    ? { body?: never }
    : undefined extends Op<K>['requestBody']
      ? { body?: BodyOf<K> }
      : { body: BodyOf<K> })

/** The arguments after the operationId: the credential and the request, both optional when nothing is required. */
type Args<K extends OperationId> =
  object extends Req<K> ? [as?: As | null, req?: Req<K>] : [as: As | null, req: Req<K>]

/**
 * A value of the wrong shape sent on purpose (a bad body, an unknown query parameter, a malformed path
 * parameter): it fits whatever position it is put in (its type is `never`, which TypeScript lets stand
 * for any type), so the operation and its typed response stay. Use it only in tests of invalid input;
 * everywhere else a type error is a bug in the test.
 */
export function unchecked(value: unknown): never {
  return value as never
}

// --- the response ------------------------------------------------------------------------------------

type Responses<K extends OperationId> = Op<K>['responses']
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>
type ErrorStatus<K extends OperationId> = Exclude<keyof Responses<K>, SuccessStatus<K> | 304>
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined
type SuccessJson<K extends OperationId> = JsonOf<Responses<K>[SuccessStatus<K>]>
type ErrorJson<K extends OperationId> = JsonOf<Responses<K>[ErrorStatus<K>]>
/** The error envelope's fields (`code`, `error`, `details`), each absent on a success. */
type ErrorFields<K extends OperationId> = {
  [P in Exclude<keyof NonNullable<ErrorJson<K>>, 'success'>]?: NonNullable<ErrorJson<K>>[P]
} & { success?: boolean }
/** A success body without its `success: true`, which the error fields type as `boolean`. */
type SuccessFields<J> = J extends object ? Omit<J, 'success'> : J
type DataOf<J> = J extends { data: infer D } ? D : undefined

/** What every response has, whatever the operation: for helpers that take the response of any call. */
export interface AnyRes {
  status: number
  body?: { success?: boolean; data?: unknown; code?: ErrorCode; error?: string; details?: unknown }
  data: unknown
  code: ErrorCode | undefined
  raw: string
  headers: Record<string, string | string[] | number | undefined>
}

/**
 * The response of `call`: the status, the parsed body, the raw text and the headers. `body` is the
 * success body of the operation with the document's error envelope fields (`code`, `error`,
 * `details`) beside it; `data` is the success envelope's `data`. Both are typed for the success: read
 * them after asserting the success status (on an error `data` is undefined); read `code` on an error.
 */
export interface Res<K extends OperationId> extends AnyRes {
  body: [SuccessJson<K>] extends [undefined]
    ? ErrorFields<K> | undefined
    : SuccessFields<SuccessJson<K>> & ErrorFields<K>
  data: DataOf<SuccessJson<K>>
}

/** The response of `callRaw`: nothing is known of its shape. */
export interface RawRes extends AnyRes {
  /* eslint-disable @typescript-eslint/no-explicit-any -- callRaw reaches what no operation types (bad paths, undocumented routes); tests read its fields one by one */
  body: any
  data: any
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

// --- the requests ------------------------------------------------------------------------------------

interface PathItemOps {
  [method: string]: { operationId?: string } | undefined
}
const table = new Map<string, { method: Method; path: string }>()
for (const [path, item] of Object.entries(document.paths as Record<string, PathItemOps>)) {
  for (const [method, op] of Object.entries(item)) {
    if (op?.operationId) table.set(op.operationId, { method: method.toUpperCase() as Method, path })
  }
}

function urlOf(
  op: OperationId,
  req: { params?: object; query?: object } = {},
): { method: Method; url: string } {
  const route = table.get(op)
  if (!route) throw new Error(`no operation ${op} in generated/openapi.json`)
  const params = (req.params ?? {}) as Record<string, unknown>
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${op}: path parameter ${name} missing`)
    return encodeURIComponent(String(params[name]))
  })
  const pairs: string[] = []
  for (const [key, value] of Object.entries(req.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined) pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`)
    }
  }
  return { method: route.method, url: pairs.length > 0 ? `${path}?${pairs.join('&')}` : path }
}

/**
 * One operation through `app.inject`, by operationId: `as` is who calls (null: nobody), `req` the path
 * parameters, query and JSON body the operation declares.
 *
 *     const res = await call(app, 'getRole', admin.cred, { params: { id: role.id } })
 *     t.equal(res.status, 200)
 *     t.equal(res.data.name, 'editor')
 */
export async function call<K extends OperationId>(
  app: FastifyInstance,
  op: K,
  ...args: Args<K>
): Promise<Res<K>> {
  const [as, req] = args as [
    As | null | undefined,
    { params?: object; query?: object; body?: unknown } | undefined,
  ]
  const { method, url } = urlOf(op, req)
  return (await callRaw(app, method, url, as ?? {}, req?.body)) as Res<K>
}

/**
 * The untyped escape hatch: any method and URL, any payload. Only for what no operation can express (a
 * path the document does not have, a wrong method, a path parameter that is not one segment); a body
 * or query of the wrong shape goes through `call` with `unchecked`. A body that is not JSON comes back
 * in `raw` only.
 */
export async function callRaw(
  app: FastifyInstance,
  method: Method,
  url: string,
  as: As | null = {},
  body?: unknown,
): Promise<RawRes> {
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
  let parsed: RawRes['body']
  try {
    parsed = res.body ? JSON.parse(res.body) : undefined
  } catch {
    parsed = undefined
  }
  return {
    status: res.statusCode,
    body: parsed,
    data: parsed?.data,
    code: parsed?.code,
    raw: res.body,
    headers: res.headers,
  }
}

/** The fields a 400 VALIDATION_ERROR names in `details` (`body.name`, `query.limit`); none for another response. */
export function detailPaths(res: AnyRes): string[] {
  const details = res.body?.details
  return Array.isArray(details) ? details.map((d: { path: string }) => d.path) : []
}

/**
 * refresh with `refreshToken`, from a fresh address unless `as` gives one (and headers, such as a user
 * agent, when given).
 */
export function refresh(
  app: FastifyInstance,
  refreshToken: string,
  as: As | null = null,
): Promise<Res<'refresh'>> {
  return call(app, 'refresh', as, { body: { refreshToken } })
}

/** logout of the session `refreshToken` belongs to, `accessToken` the bearer, from a fresh address. */
export function logoutWith(
  app: FastifyInstance,
  accessToken: string,
  refreshToken: string,
): Promise<Res<'logout'>> {
  return call(app, 'logout', { token: accessToken }, { body: { refreshToken } })
}

/** createClientKey through the API as `as`; the created key's data, its value in `key`. */
export async function newClientKey(app: FastifyInstance, as: As, body: BodyOf<'createClientKey'>) {
  return (await call(app, 'createClientKey', as, { body })).body.data
}

/**
 * The `mfaToken` a login stopped at the second factor carries in `details` (401 OTP_REQUIRED or
 * OTP_ENROLLMENT_REQUIRED); throws when the response has none.
 */
export function mfaTokenIn(res: AnyRes): string {
  const details = res.body?.details as { mfaToken?: unknown } | undefined
  if (typeof details?.mfaToken !== 'string') throw new Error(`expected an mfaToken in details: ${res.raw}`)
  return details.mfaToken
}

/** login with the fixture password or another; from a fresh address unless `ip` is given. */
export function login(
  app: FastifyInstance,
  tenantCode: string,
  identifier: string,
  password = PASSWORD,
  ip?: string,
): Promise<Res<'login'>> {
  return call(app, 'login', { ip }, { body: { tenantCode, identifier, password } })
}

/**
 * login as a fixture user: the fixture password unless `password` is given, `otp` when given, from a
 * fresh address unless `ip` is given.
 */
export function loginAs(
  app: FastifyInstance,
  user: UserFx,
  opts: { otp?: string; password?: string; ip?: string } = {},
): Promise<Res<'login'>> {
  const { otp, password = PASSWORD, ip } = opts
  const body = { tenantCode: user.tenant.code, identifier: user.email, password }
  return call(app, 'login', { ip }, { body: otp === undefined ? body : { ...body, otp } })
}

/**
 * Logs a fixture user in (fixture password, fresh address, `otp` when given) and returns its tokens;
 * throws unless 200.
 */
export async function loginTokens(
  app: FastifyInstance,
  user: UserFx,
  opts: { otp?: string } = {},
): Promise<{ accessToken: string; refreshToken: string }> {
  const res = await loginAs(app, user, opts)
  if (res.status !== 200) throw new Error(`login failed: ${res.raw}`)
  return res.data
}
