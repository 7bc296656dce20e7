import type { FastifyReply, FastifyRequest } from 'fastify'
import type { components } from '../../../generated/openapi.js'
import type { AppContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { assertRecentSignIn } from '../../security/recent-auth.js'
import type { Principal, UserPrincipal } from '../../security/principal.js'
import type { LoginMethod } from '../../db/database.js'
import { sessionLoginMethod } from '../sessions/queries.js'
import { findUserById } from '../users/queries.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import type { PooledProvider } from './pool.js'

// The interaction's JSON operations (contract section 23, "Sign-in and consent"): the sign-in page signs the
// person in through the public API, then hands the fresh access token here; the provider's interaction (its
// cookies, bound to this browser) is read and finished through the library's own calls.

type Details = components['schemas']['InteractionDetails']
type Raw = { req: FastifyRequest['raw']; res: FastifyReply['raw'] }

const gone = () => new AppError('INTERACTION_NOT_FOUND')

/** The library's interaction of this browser with this uid, or INTERACTION_NOT_FOUND. */
async function interactionOf(pooled: PooledProvider, raw: Raw, uid: string) {
  const details = await pooled.provider.interactionDetails(raw.req, raw.res).catch(() => null)
  if (!details || details.uid !== uid) throw gone()
  return details
}

/** GET /t/:code/interaction/:uid/details: what the page shows. */
export async function getInteractionDetails(pooled: PooledProvider, raw: Raw, uid: string): Promise<Details> {
  const it = await interactionOf(pooled, raw, uid)
  const params = it.params as Record<string, string | undefined>
  const client = await pooled.provider.Client.find(String(params.client_id ?? ''))
  if (!client) throw gone()
  const meta = client.metadata() as Record<string, unknown>
  const str = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    uid: it.uid,
    prompt: it.prompt.name === 'login' ? 'login' : 'consent',
    client: {
      clientId: client.clientId,
      name: str(meta.client_name) ?? client.clientId,
      logoUri: str(meta.logo_uri),
      clientUri: str(meta.client_uri),
      firstParty: meta.tessera_first_party === true,
    },
    scopes: String(params.scope ?? '')
      .split(' ')
      .filter((s) => s !== ''),
    resource: str(params.resource),
    loginHint: str(params.login_hint),
  }
}

/** The caller as a user of the interaction's tenant: a Client Key or another tenant's token is FORBIDDEN. */
function userOfTenant(p: Principal, pooled: PooledProvider): UserPrincipal {
  if (p.kind !== 'user' || p.tenantId !== pooled.tenant.id) throw new AppError('FORBIDDEN')
  return p
}

/** RFC 8176 `amr` of a sign-in (section 23); a session older than its method column goes by the user's factor. */
function amrOf(method: LoginMethod | null, otpEnabled: boolean): string[] {
  if (method === 'passkey') return ['hwk', 'user', 'mfa']
  // A sign-in through another provider (contract section 24): what it checked there is its own to say.
  if (method === 'fed') return ['fed']
  if (method === 'otp' || (method === null && otpEnabled)) return ['pwd', 'otp', 'mfa']
  return ['pwd']
}

/** POST /t/:code/interaction/:uid/login: the provider session now belongs to this token's sign-in. */
export async function loginInteraction(
  ctx: AppContext,
  pooled: PooledProvider,
  raw: Raw,
  uid: string,
  actor: Principal,
) {
  const it = await interactionOf(pooled, raw, uid)
  const user = userOfTenant(actor, pooled)
  const maxAge = Number((it.params as Record<string, unknown>).max_age)
  await assertRecentSignIn(
    user,
    ctx.clock.now(),
    ctx.liveSession,
    undefined,
    Number.isInteger(maxAge) && maxAge >= 0 ? Math.min(maxAge, 600) : 600,
  )
  const row = await findUserById(ctx.dbs.forTenant(user.tenantId), user.tenantId, user.userId)
  if (!row || row.status !== 'ACTIVE') throw new AppError('FORBIDDEN')
  const redirectTo = await pooled.provider.interactionResult(
    raw.req,
    raw.res,
    {
      login: {
        accountId: user.userId,
        ts: user.authTime ?? undefined,
        amr: amrOf(
          await sessionLoginMethod(
            ctx.dbs.forTenant(user.tenantId),
            user.tenantId,
            user.userId,
            user.sessionId,
          ),
          row.otp_enabled,
        ),
        remember: true,
        // The provider session belongs to this Tessera session (library.ts, bindSessions).
        tessera_sid: user.sessionId,
      },
    },
    { mergeWithLastSubmission: false },
  )
  return { redirectTo }
}

/** POST /t/:code/interaction/:uid/consent: grants what was asked (approve) or sends access_denied. */
export async function consentInteraction(
  ctx: AppContext,
  pooled: PooledProvider,
  raw: Raw,
  uid: string,
  actor: Principal,
  approve: boolean,
  meta: RequestMeta,
) {
  const it = await interactionOf(pooled, raw, uid)
  const user = userOfTenant(actor, pooled)
  if (it.prompt.name !== 'consent') throw new AppError('VALIDATION_ERROR', 'Sign in first')
  const accountId = it.session?.accountId
  if (accountId !== user.userId)
    throw new AppError('FORBIDDEN', 'Another user is signed in to this interaction')
  const clientId = String((it.params as Record<string, unknown>).client_id)
  await writeAudit(ctx.dbs.forTenant(user.tenantId), {
    tenantId: user.tenantId,
    action: 'OAUTH_CONSENT',
    success: approve,
    userId: user.userId,
    actor: user,
    errorMessage: approve ? null : 'access_denied',
    metadata: { clientId },
    meta,
  })
  if (!approve) return abort(pooled, raw, it.uid)
  const redirectTo = await pooled.provider.interactionResult(
    raw.req,
    raw.res,
    { consent: { grantId: await saveGrant(pooled, it, accountId, clientId) } },
    { mergeWithLastSubmission: true },
  )
  return { redirectTo }
}

type Interaction = Awaited<ReturnType<PooledProvider['provider']['interactionDetails']>>

/** The grant of this consent: the existing one with what was missing added, or a new one. */
export async function saveGrant(
  pooled: PooledProvider,
  it: Interaction,
  accountId: string,
  clientId: string,
): Promise<string> {
  const { Grant } = pooled.provider
  const grant = (it.grantId ? await Grant.find(it.grantId) : undefined) ?? new Grant({ accountId, clientId })
  const details = it.prompt.details as {
    missingOIDCScope?: string[]
    missingOIDCClaims?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  const scopes = new Set(details.missingOIDCScope ?? [])
  // Section 23: offline_access is granted with this consent, though the library drops it from the request
  // without prompt=consent (routes.ts marks the request that asked for it).
  if ((it.params as Record<string, unknown>).tessera_offline === '1') scopes.add('offline_access')
  if (scopes.size > 0) grant.addOIDCScope([...scopes].join(' '))
  if (details.missingOIDCClaims?.length) grant.addOIDCClaims(details.missingOIDCClaims)
  for (const [indicator, list] of Object.entries(details.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, list.join(' '))
  return grant.save()
}

/** Ends the interaction with access_denied. */
async function abort(pooled: PooledProvider, raw: Raw, _uid: string) {
  const redirectTo = await pooled.provider.interactionResult(
    raw.req,
    raw.res,
    { error: 'access_denied', error_description: 'End-User aborted interaction' },
    { mergeWithLastSubmission: false },
  )
  return { redirectTo }
}

/** POST /t/:code/interaction/:uid/abort: the client receives access_denied. */
export async function abortInteraction(pooled: PooledProvider, raw: Raw, uid: string) {
  const it = await interactionOf(pooled, raw, uid)
  return abort(pooled, raw, it.uid)
}
