import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../errors.js'
import { isDatabaseUnavailable } from '../db/connect.js'
import type { RouteSpec } from '../lib/route-spec.js'
import { holds, type Principal } from '../security/principal.js'
import { assertRecentSignIn } from '../security/recent-auth.js'
import { bucketOf, DEFAULT_BUDGET, type Bucket } from './rate-limit.js'

const userGone = () => new AppError('USER_NOT_FOUND', 'The user no longer exists')

const OWN_USER_PATH = /^\/api\/v1\/me(\/|$)/

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

/** True when the raw header list names Authorization or X-Client-Key more than once. */
function repeatsCredentialHeader(raw: readonly string[]): boolean {
  let authorization = 0
  let clientKey = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++
    else if (name.length === 12 && name.toLowerCase() === 'x-client-key') clientKey++
  }
  return authorization > 1 || clientKey > 1
}

/** Reads the request's one credential (JWT, or Client Key by header or `Bearer ck_`) and verifies it. */
async function resolveCredential(
  app: FastifyInstance,
  req: FastifyRequest,
  spec: RouteSpec,
): Promise<Principal> {
  const { ctx } = app
  const authz = req.headers.authorization
  const xkey = req.headers['x-client-key']
  // Why rawHeaders: Node keeps only the first Authorization header and joins repeated X-Client-Key
  // values, so a second credential would pass unseen.
  if ((authz !== undefined || xkey !== undefined) && repeatsCredentialHeader(req.raw.rawHeaders)) {
    throw new AppError('UNAUTHORIZED', 'More than one Authorization or X-Client-Key header')
  }
  let bearer: string | undefined
  if (authz !== undefined) {
    const m = BEARER.exec(authz)
    if (!m) throw new AppError('UNAUTHORIZED', 'Malformed Authorization header')
    bearer = m[1]
  }
  if (Array.isArray(xkey)) throw new AppError('UNAUTHORIZED', 'More than one client key')
  if (xkey !== undefined && bearer !== undefined) {
    throw new AppError('UNAUTHORIZED', 'Send either an access token or a client key, not both')
  }
  // A publishable key is public: it is a credential for the two sign-up operations only.
  if (bearer?.startsWith('pk_') || xkey?.startsWith('pk_')) {
    throw new AppError('UNAUTHORIZED', 'A publishable key is no credential for this endpoint')
  }
  const keyValue = xkey ?? (bearer?.startsWith('ck_') ? bearer : undefined)
  if (keyValue !== undefined) {
    if (spec.auth === 'jwt') throw new AppError('UNAUTHORIZED', 'This endpoint requires a user access token')
    const origin = req.headers.origin
    return ctx.keys.verify(keyValue, req.ip, typeof origin === 'string' ? origin : undefined)
  }
  if (bearer === undefined) throw new AppError('UNAUTHORIZED', 'Missing credential')
  return ctx.tokens.verify(bearer, ctx.clock.now())
}

/** The per-IP budget for this request: the default, or the tenant's raised one (auth_config.rateLimits). */
async function budgetFor(app: FastifyInstance, req: FastifyRequest, bucket: Bucket, principal?: Principal) {
  let tenantId = principal?.tenantId
  const body = req.body as { tenantCode?: unknown; refreshToken?: unknown; mfaToken?: unknown } | undefined
  // The OpenID provider's endpoints name their tenant in the path (contract section 23): its budget applies.
  const pathCode = (req.params as { tenantCode?: unknown } | undefined)?.tenantCode
  if (
    !tenantId &&
    typeof pathCode === 'string' &&
    pathCode.length <= 64 &&
    req.routeOptions.config?.spec?.protocol
  )
    tenantId = (await app.ctx.tenants.byCode(pathCode))?.id
  if (!tenantId && bucket === 'login') {
    const code = body?.tenantCode
    if (typeof code === 'string' && code.length <= 64) tenantId = (await app.ctx.tenants.byCode(code))?.id
  }
  // Why: a refresh token names its tenant, so that tenant's raised budget applies to refreshes too.
  if (!tenantId && typeof body?.refreshToken === 'string')
    tenantId = app.ctx.refreshTokenTenant(body.refreshToken) ?? undefined
  // An mfaToken has the refresh token's form: the second step of a login spends its tenant's budget.
  if (!tenantId && typeof body?.mfaToken === 'string')
    tenantId = app.ctx.refreshTokenTenant(body.mfaToken) ?? undefined
  if (!tenantId) return DEFAULT_BUDGET[bucket]
  const limits = (await app.ctx.tenants.byId(tenantId))?.authConfig.rateLimits
  const raised = bucket === 'login' ? limits?.loginPerMinute : limits?.requestsPerMinute
  return raised ?? DEFAULT_BUDGET[bucket]
}

/**
 * The one gate every request passes before schema validation: credential → per-IP rate limit →
 * credential failure or missing permission → recent sign-in. The two sign-up operations take a
 * publishable key (`X-Publishable-Key`) and the request's `Origin` instead, checked the same way. Permissions (`x-permission`) and the need
 * for a recent sign-in (`x-recent-auth`) come from the document, so no handler checks them by hand.
 */
async function gatePlugin(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', async (req, reply) => {
    const spec = req.routeOptions.config?.spec
    if (!spec) {
      await app.checkRateLimit(req, reply, 'global', DEFAULT_BUDGET.global)
      return
    }
    let principal: Principal | undefined
    let authError: unknown
    if (spec.auth === 'jwt' || spec.auth === 'jwt-or-key') {
      try {
        principal = await resolveCredential(app, req, spec)
      } catch (err) {
        authError = err
        // A known key refused by its allowlists still made the request: its usage log records it.
        const keyRef = (err as { keyRef?: { tenantId: string; keyId: string } }).keyRef
        if (keyRef) req.refusedKey = keyRef
      }
    } else if (spec.auth === 'publishable-key') {
      try {
        req.signupKey = await app.ctx.publishableKeys.verify(
          req.headers['x-publishable-key'],
          req.headers.origin,
        )
      } catch (err) {
        authError = err
      }
    }
    // Why this early: a request made with a valid key is logged against it even when refused below
    // (429, 403); handlers never run for a refused request either way.
    if (principal) req.principal = principal
    const bucket = bucketOf(spec)
    if (bucket !== null) {
      // Why: a failed tenant lookup must not hide the 429 or the credential error, so the default budget
      // applies; but a database that does not answer is a 503 now, not after a second wait in the handler.
      const max = await budgetFor(app, req, bucket, principal).catch((err: unknown) => {
        if (isDatabaseUnavailable(err)) throw err
        return DEFAULT_BUDGET[bucket]
      })
      await app.checkRateLimit(req, reply, bucket, max)
    }
    if (authError) throw authError
    if (!principal) return
    if (spec.permission && !holds(principal.permissions, spec.permission)) {
      throw new AppError('FORBIDDEN', `Missing permission ${spec.permission}`)
    }
    // Why after the permission: signing in again would not help a caller who may not do this at all.
    if (spec.recentAuth) {
      // Why only /me: those operations act on the caller's own user and answer USER_NOT_FOUND once it is
      // deleted; elsewhere a token of a user that does not exist has no sign-in behind it, and is refused.
      const declares404 = OWN_USER_PATH.test(spec.path) && spec.schema.response?.['404'] !== undefined
      await assertRecentSignIn(
        principal,
        app.ctx.clock.now(),
        app.ctx.liveSession,
        declares404 ? userGone : undefined,
      )
    }
  })
}

export default fp(gatePlugin, { name: 'gate', dependencies: ['rate-limit'] })
