import type { FastifyBaseLogger } from 'fastify'
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import * as client from 'openid-client'
import type { AppContext, TenantInfo } from '../../context.js'
import { AppError, fail } from '../../errors.js'
import { decryptSecret, encryptSecret } from '../../lib/crypto-box.js'
import { randomToken, sha256Hex } from '../../lib/tokens.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { findIdentityProvider } from '../identity-providers/queries.js'
import { callbackUrl } from '../identity-providers/service.js'
import { lockedError, userThrottleKeys } from '../account/lockout.js'
import { secondFactorAtLogin } from '../otp/login-step.js'
import { findUserById } from '../users/queries.js'
import { admitUser, completeLogin, loginFailure } from '../sessions/complete-login.js'
import { accountFor } from './accounts.js'
import * as q from './queries.js'
import { authorizationUrl, personOf } from './upstream.js'

// A sign-in through another provider, in a browser (contract section 24, "The sign-in flow"): authorize sends
// the browser there with the service's own state, nonce and PKCE and a cookie binding the flow to it; the
// callback checks them, reads the person, finds (or links, or makes) the account and returns a single-use
// login code in the fragment of `return_to`; POST /login/federated trades it, with the page's own PKCE
// verifier, for a login.

const FLOW_MS = 10 * 60_000
const CODE_MS = 60_000
/** The cookie that binds a flow to its browser, on the tenant's federation paths only. */
export const FLOW_COOKIE = 'tessera_federation'

/** Counts a federated sign-in's end in tessera_federated_logins_total{result} (routes.ts owns the counter). */
export type CountResult = (result: string) => void

/** What the callback's redirect carries in its fragment. */
export type FlowError =
  | 'account_not_linked'
  | 'signup_disabled'
  | 'user_inactive'
  | 'provider_error'
  | 'already_linked'
  | 'invalid_link_token'

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', 'Request validation failed', [{ path, message }])

async function activeTenant(ctx: AppContext, code: string): Promise<TenantInfo> {
  const tenant = await ctx.tenants.byCode(code)
  if (!tenant || tenant.status !== 'ACTIVE') fail('TENANT_NOT_FOUND')
  return tenant
}

/**
 * Whether a flow may end at `raw`: under `{PUBLIC_URL}/console/`, under the tenant's interaction pages, or on an
 * origin of `auth_config.federation.returnOrigins`. Compared parsed, so `//host`, `..` and userinfo tricks fail.
 */
export function returnToAllowed(ctx: AppContext, tenant: TenantInfo, raw: string): boolean {
  const u = URL.parse(raw)
  if (!u || u.username || u.password || u.hash || !/^https?:$/.test(u.protocol)) return false
  const base = new URL(ctx.config.publicUrl)
  const own = u.origin === base.origin
  const prefix = base.pathname.replace(/\/$/, '')
  if (own && u.pathname.startsWith(`${prefix}/console/`)) return true
  if (own && u.pathname.toLowerCase().startsWith(`${prefix}/t/${tenant.code.toLowerCase()}/interaction/`))
    return true
  return tenant.authConfig.federation.returnOrigins.some((o) => URL.parse(o)?.origin === u.origin)
}

/** GET /t/:code/federation/:id/authorize: the provider's address, and the cookie value to bind the flow. */
export async function startFederation(
  ctx: AppContext,
  input: {
    tenantCode: string
    providerId: string
    returnTo: string
    codeChallenge: string
    intent?: 'login' | 'link'
    linkToken?: string
  },
): Promise<{ location: string; binding: string | null; cookiePath: string }> {
  const tenant = await activeTenant(ctx, input.tenantCode)
  if (!returnToAllowed(ctx, tenant, input.returnTo))
    throw invalid('query.return_to', 'must lie under the console, the interaction pages or a return origin')
  const db = ctx.dbs.forTenant(tenant.id)
  const provider =
    (await findIdentityProvider(db, tenant.id, input.providerId)) ?? fail('IDENTITY_PROVIDER_NOT_FOUND')
  const code = tenant.code.toLowerCase()
  const cookiePath = flowCookiePath(ctx, code)
  const state = randomToken(32)
  const nonce = randomToken(32)
  const verifier = client.randomPKCECodeVerifier()
  const binding = randomToken(32)
  const location = await authorizationUrl(ctx, provider, {
    redirectUri: callbackUrl(ctx, code),
    state,
    nonce,
    verifier,
  })
  let linkUserId: string | null = null
  if (input.intent === 'link') {
    // Why taken here, once the provider's address is known: the token is single use (a provider that did not
    // answer leaves it usable), and the flow row carries its user to the callback.
    const now = new Date(ctx.clock.now())
    const taken = input.linkToken
      ? await q.takeLinkToken(db, tenant.id, sha256Hex(input.linkToken), now)
      : undefined
    if (!taken)
      return { location: ending(input.returnTo, { error: 'invalid_link_token' }), binding: null, cookiePath }
    linkUserId = taken
  }
  const id = randomUUID()
  await q.insertFlow(db, {
    id,
    tenant_id: tenant.id,
    provider_id: provider.id,
    state_hash: sha256Hex(state),
    binding_hash: sha256Hex(binding),
    nonce,
    verifier_enc: encryptSecret(verifier, ctx.secretsKey, `federation:${id}`),
    return_to: input.returnTo,
    code_challenge: input.codeChallenge,
    intent: linkUserId ? 'link' : 'login',
    link_user_id: linkUserId,
    expires_at: new Date(ctx.clock.now() + FLOW_MS),
  })
  return { location: location.href, binding, cookiePath }
}

/**
 * `intent=link`: links the provider's person to the link token's user (contract section 24): `already_linked`
 * when the identity is another user's; linking it again to the same user changes nothing.
 */
async function linkIdentity(
  ctx: AppContext,
  tenant: TenantInfo,
  providerId: string,
  userId: string,
  person: { subject: string; email: string | null },
  meta: RequestMeta,
): Promise<'linked' | 'already_linked' | 'user_inactive'> {
  const db = ctx.dbs.forTenant(tenant.id)
  const user = await findUserById(db, tenant.id, userId)
  if (!user || user.status !== 'ACTIVE') return 'user_inactive'
  const holder = await q.findLinkedUser(db, tenant.id, providerId, person.subject)
  if (holder) return holder.id === userId ? 'linked' : 'already_linked'
  const link = { tenantId: tenant.id, userId, providerId, subject: person.subject, email: person.email }
  if (!(await q.insertIdentity(db, { ...link, now: new Date(ctx.clock.now()) }))) return 'already_linked'
  await writeAudit(db, {
    tenantId: tenant.id,
    action: 'IDENTITY_LINKED',
    success: true,
    userId,
    actorUserId: userId,
    metadata: { providerId, reason: 'link' },
    meta,
  })
  return 'linked'
}

/** Where the callback sends the browser: `return_to` with the login code or the error in the fragment. */
function ending(returnTo: string, fragment: Record<string, string>): string {
  const u = new URL(returnTo)
  u.hash = new URLSearchParams(fragment).toString()
  return u.href
}

const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))

/**
 * Where the flow's cookie lives: the tenant's federation paths as the browser sees them, under PUBLIC_URL's
 * own path when the service is served below one (a proxy that strips the prefix).
 */
export function flowCookiePath(ctx: AppContext, code: string): string {
  return `${new URL(ctx.config.publicUrl).pathname.replace(/\/$/, '')}/t/${code}/federation/`
}

/** The callback as the provider was sent to it: the registered callback URL with the request's query. */
export function callbackOf(ctx: AppContext, code: string, rawUrl: string): URL {
  const url = new URL(callbackUrl(ctx, code))
  url.search = new URL(rawUrl, 'http://x').search
  return url
}

/** GET /t/:code/federation/callback: the flow of `state`, used once, ended at its `return_to`. */
export async function finishFederation(
  ctx: AppContext,
  input: { tenantCode: string; state: string; binding: string | undefined; url: URL; log: FastifyBaseLogger },
  meta: RequestMeta,
  count: CountResult,
): Promise<string> {
  const tenant = await activeTenant(ctx, input.tenantCode)
  const db = ctx.dbs.forTenant(tenant.id)
  const now = new Date(ctx.clock.now())
  const flow = await q.takeFlow(db, tenant.id, sha256Hex(input.state), now)
  if (!flow) throw invalid('query.state', 'names no live sign-in')
  const failed = async (error: FlowError, reason: string, userId: string | null = null) => {
    await loginFailure(db, tenant.id, meta, {
      code: 'INVALID_CREDENTIALS',
      userId,
      reason,
      errorMessage: error,
      method: 'federated',
      providerId: flow.provider_id,
    })
    count(error)
    return ending(flow.return_to, { error })
  }
  // Why the browser's cookie: a callback URL carried to another browser (login CSRF) is refused there.
  if (!input.binding || !sameHash(sha256Hex(input.binding), flow.binding_hash))
    return failed('provider_error', 'callback without the flow’s cookie')
  const provider = await findIdentityProvider(db, tenant.id, flow.provider_id)
  if (!provider) return failed('provider_error', 'provider deleted')
  const verifier = decryptSecret(flow.verifier_enc, ctx.secretsKey, `federation:${flow.id}`)
  const person = await personOf(ctx, provider, input.url, {
    state: input.state,
    nonce: flow.nonce,
    verifier,
  }).catch(() => null)
  if (!person) return failed('provider_error', 'the provider refused, or a check of its answer failed')
  if (flow.link_user_id) {
    const linked = await linkIdentity(ctx, tenant, provider.id, flow.link_user_id, person, meta)
    if (linked !== 'linked') return failed(linked, linked, flow.link_user_id)
    count('linked')
    return ending(flow.return_to, {})
  }
  // Why caught: past the provider's answer the browser has a return_to to go back to; a refusal of ours
  // (a default role no longer assignable, a fault) ends there too, logged, rather than as JSON in its tab.
  const outcome = await accountFor(ctx, tenant, provider, person, meta).catch((err: unknown) => {
    input.log.warn({ err, providerId: provider.id }, 'federated sign-in: the account step failed')
    return { error: 'provider_error' as const, userId: undefined }
  })
  if ('error' in outcome) return failed(outcome.error, outcome.error, outcome.userId ?? null)
  if (outcome.user.status !== 'ACTIVE') return failed('user_inactive', 'user inactive', outcome.user.id)
  const code = randomToken(32)
  await q.insertLoginCode(db, {
    tenantId: tenant.id,
    userId: outcome.user.id,
    providerId: provider.id,
    hash: sha256Hex(code),
    challenge: flow.code_challenge,
    expiresAt: new Date(now.getTime() + CODE_MS),
  })
  return ending(flow.return_to, { login_code: code })
}

/** BASE64URL(SHA-256(verifier)): RFC 7636's S256. */
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** POST /login/federated: the login code and its page's verifier, for a login (or the second step). */
export async function loginFederated(
  ctx: AppContext,
  input: { tenantCode: string; code: string; codeVerifier: string },
  meta: RequestMeta,
  count: CountResult,
) {
  const tenant = await activeTenant(ctx, input.tenantCode)
  const db = ctx.dbs.forTenant(tenant.id)
  const taken = await q.takeLoginCode(db, tenant.id, sha256Hex(input.code), new Date(ctx.clock.now()))
  const providerId = taken?.provider_id
  const failed = (
    code: Parameters<typeof loginFailure>[3]['code'],
    userId: string | null,
    reason: string,
  ) => {
    count(code === 'OTP_REQUIRED' || code === 'OTP_ENROLLMENT_REQUIRED' ? 'second_factor' : 'failure')
    return loginFailure(db, tenant.id, meta, { code, userId, reason, method: 'federated', providerId })
  }
  if (!taken) throw await failed('INVALID_CREDENTIALS', null, 'unknown, used or expired login code')
  if (s256(input.codeVerifier) !== taken.code_challenge)
    throw await failed('INVALID_CREDENTIALS', taken.user_id, 'verifier does not match the challenge')
  const user = await findUserById(db, tenant.id, taken.user_id)
  if (!user) throw await failed('INVALID_CREDENTIALS', taken.user_id, 'user gone')
  // Account throttling's lock holds here too (section 24, "as any user"); a provider's sign-in counts no failure.
  for (const key of tenant.authConfig.lockout.enabled ? userThrottleKeys(user) : []) {
    const state = await ctx.lockout.check(tenant.id, key, ctx.clock.now())
    if (state.lockedSeconds > 0) {
      await failed('INVALID_CREDENTIALS', user.id, 'identifier locked')
      throw lockedError(state.lockedSeconds)
    }
  }
  await admitUser(ctx, tenant, user, failed)
  const factor =
    user.otp_enabled || tenant.authConfig.mfa.required
      ? await secondFactorAtLogin(ctx, {
          tenant,
          userId: user.id,
          otp: undefined,
          throttleKey: userThrottleKeys(user)[0] ?? `user:${user.id}`,
          failed: (code) => failed(code, user.id, code),
          countFailure: async () => undefined,
          meta,
        })
      : null
  const opened = await completeLogin(ctx, tenant, user, meta, {
    method: 'federated',
    providerId: taken.provider_id,
    secondFactor: factor !== null,
  })
  if (!opened) throw await failed('USER_INACTIVE', user.id, 'user no longer active')
  count('success')
  return opened
}
