import { randomUUID } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import type { Principal, UserPrincipal } from '../../security/principal.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { encryptSecret } from '../../lib/crypto-box.js'
import { classifyIdentifier } from '../../lib/identifiers.js'
import { checkPassword } from '../../lib/password-policy.js'
import { randomToken, sha256Hex } from '../../lib/tokens.js'
import { writeAudit, type AuditAction, type RequestMeta } from '../audit/write.js'
import { endUserSessions, countActive } from '../authentication/session-queries.js'
import { userThrottleKeys } from '../account/lockout.js'
import type { TenantInfo } from '../../context.js'
import { findUserForLogin, lockUser, setPasswordHash } from '../users/queries.js'
import { linkFor } from './config.js'
import { consumeToken, countRecentTokens, insertTokenAndMail, voidTokens } from './queries.js'
import { mailerOf, messageContext, type Mailer } from './sender.js'
import { renderMessage, type Purpose } from './templates.js'
import { markEmailVerified } from '../users/queries.js'

/** Mails of one purpose that reach one user in an hour, at most (contract section 18). */
const HOURLY_CAP = 3
/** The id no user has: the statements run for an unknown identifier, as for a known one. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000'

/** The mailer, or 503 MAIL_NOT_CONFIGURED when SMTP_URL is unset. */
function requireMailer(ctx: AppContext): Mailer {
  return mailerOf(ctx) ?? fail('MAIL_NOT_CONFIGURED')
}

/** An ACTIVE tenant by code, else 404 TENANT_NOT_FOUND (as at login). */
async function activeTenant(ctx: AppContext, code: string): Promise<TenantInfo> {
  const tenant = await ctx.tenants.byCode(code)
  if (!tenant || tenant.status !== 'ACTIVE') fail('TENANT_NOT_FOUND')
  return tenant
}

/**
 * Makes a token and writes it with its message's outbox row in `trx`: the message is rendered now and
 * stored encrypted (it carries the link), so the raw token exists nowhere else at rest.
 */
async function queueMail(
  ctx: AppContext,
  trx: Transaction<Database>,
  p: { tenant: TenantInfo; userId: string; email: string; purpose: Purpose },
): Promise<void> {
  const cfg = p.tenant.authConfig.email
  const now = new Date(ctx.clock.now())
  const ttl = p.purpose === 'reset' ? cfg.passwordResetTtlSeconds : cfg.verificationTtlSeconds
  const token = randomToken(32)
  const link = linkFor(
    p.purpose === 'reset' ? cfg.resetUrl : cfg.verifyUrl,
    p.purpose === 'reset' ? 'reset-password' : 'verify-email',
    { publicUrl: ctx.config.publicUrl, tenantCode: p.tenant.code, token },
  )
  const message = renderMessage({
    purpose: p.purpose,
    locale: cfg.locale,
    tenantName: p.tenant.name,
    link,
    minutes: Math.floor(ttl / 60),
    recipient: p.email,
  })
  if (p.purpose === 'reset') await voidTokens(trx, p.tenant.id, p.userId, 'reset', now)
  await insertTokenAndMail(trx, {
    tenantId: p.tenant.id,
    userId: p.userId,
    purpose: p.purpose,
    tokenHash: sha256Hex(token),
    email: p.email,
    expiresAt: new Date(now.getTime() + ttl * 1000),
    now,
    outboxId: randomUUID(),
    messageEnc: encryptSecret(JSON.stringify(message), ctx.secretsKey, messageContext(p.tenant.id)),
  })
}

const hourAgo = (ctx: AppContext) => new Date(ctx.clock.now() - 3_600_000)

/**
 * POST /password/forgot. The request itself does the same work whoever the identifier names: the tenant
 * check, then the lookup and everything after it run deferred, after the answer (so neither the bytes nor
 * the time of the 202 depend on the user). One PASSWORD_RESET_REQUESTED row, written by the deferred part.
 */
export async function forgotPassword(
  ctx: AppContext,
  input: { tenantCode: string; identifier: string },
  meta: RequestMeta,
) {
  const mailer = requireMailer(ctx)
  const tenant = await activeTenant(ctx, input.tenantCode)
  mailer.defer(() => requestReset(ctx, tenant, input.identifier, meta))
  return { accepted: true as const }
}

/** The deferred part of POST /password/forgot: find the user, apply the cap, queue the mail, audit. */
async function requestReset(ctx: AppContext, tenant: TenantInfo, identifier: string, meta: RequestMeta) {
  const db = ctx.dbs.forTenant(tenant.id)
  const audit = (success: boolean, userId: string | null, reason?: string) =>
    writeAudit(db, {
      tenantId: tenant.id,
      action: 'PASSWORD_RESET_REQUESTED',
      success,
      userId,
      errorMessage: reason,
      metadata: reason ? { reason } : {},
      meta,
    })
  // Every request runs the same statements, whoever the identifier names (one lookup, then a transaction
  // that locks and counts), so even the deferred part's load does not tell existing users from others.
  const id = classifyIdentifier(identifier)
  const enabled = id !== null && tenant.authConfig.loginIdentifiers.includes(id.kind)
  const found = await findUserForLogin(db, tenant.id, id?.kind ?? 'email', id?.value ?? identifier)
  const user = enabled ? found : undefined
  const refused = await db.transaction().execute(async (trx): Promise<string | null> => {
    // Why the user's row lock: concurrent requests (on any instance) count the cap one after another.
    const locked = await lockUser(trx, tenant.id, user?.id ?? NIL_UUID)
    const recent = await countRecentTokens(trx, tenant.id, user?.id ?? NIL_UUID, 'reset', hourAgo(ctx))
    if (!user || !locked) return 'unknown identifier'
    if (!user.email) return 'no email'
    if (user.status !== 'ACTIVE') return 'not active'
    if (recent >= HOURLY_CAP) return 'hourly cap'
    await queueMail(ctx, trx, { tenant, userId: user.id, email: user.email, purpose: 'reset' })
    await writeAudit(trx, {
      tenantId: tenant.id,
      action: 'PASSWORD_RESET_REQUESTED',
      success: true,
      userId: user.id,
      meta,
    })
    return null
  })
  if (refused) return audit(false, user?.id ?? null, refused)
  mailerOf(ctx)?.nudge()
}

/** Writes the failure row of a public email operation whose token named a user, then rethrows. */
async function auditFailure(
  ctx: AppContext,
  tenantId: string,
  action: AuditAction,
  userId: string | null,
  err: unknown,
  meta: RequestMeta,
): Promise<never> {
  if (userId) {
    const code = err instanceof AppError ? err.code : 'INTERNAL_ERROR'
    await writeAudit(ctx.dbs.forTenant(tenantId), {
      tenantId,
      action,
      success: false,
      userId,
      errorMessage: code,
      metadata: action === 'PASSWORD_RESET' ? { method: 'email' } : {},
      meta,
    }).catch(() => undefined)
  }
  throw err
}

/**
 * POST /password/reset. Policy first (a refused password leaves the token usable), the hash off the
 * event loop, then one transaction: the token is used by one conditional UPDATE (of concurrent resets
 * exactly one wins), the hash replaced, every session revoked, the address marked verified. After the
 * commit the user's login throttling is cleared. One PASSWORD_RESET row (metadata.method "email").
 */
export async function resetPassword(
  ctx: AppContext,
  input: { tenantCode: string; token: string; newPassword: string },
  meta: RequestMeta,
) {
  requireMailer(ctx)
  const tenant = await activeTenant(ctx, input.tenantCode)
  const rules = checkPassword(input.newPassword, tenant.authConfig.passwordPolicy)
  if (rules.length > 0) fail('PASSWORD_POLICY_VIOLATION', undefined, rules)
  const hash = await ctx.hasher.hash(input.newPassword)
  const db = ctx.dbs.forTenant(tenant.id)
  let userId: string | null = null
  try {
    const out = await db.transaction().execute(async (trx) => {
      const now = new Date(ctx.clock.now())
      const token = await consumeToken(trx, tenant.id, sha256Hex(input.token), 'reset', now)
      if (!token) fail('INVALID_EMAIL_TOKEN')
      userId = token.userId
      const user = await lockUser(trx, tenant.id, token.userId)
      if (!user || user.status !== 'ACTIVE') fail('INVALID_EMAIL_TOKEN')
      await setPasswordHash(trx, tenant.id, user.id, hash)
      // Why only for the same address: the mailbox the link went to is the one proven.
      if (user.email && user.email.toLowerCase() === token.email.toLowerCase()) {
        await markEmailVerified(trx, tenant.id, user.id)
      }
      const sessionsRevoked = countActive(
        await endUserSessions(trx, tenant.id, user.id, 'password_changed', now),
        now,
      )
      await writeAudit(trx, {
        tenantId: tenant.id,
        action: 'PASSWORD_RESET',
        success: true,
        userId: user.id,
        metadata: { sessionsRevoked, method: 'email' },
        meta,
      })
      return { user, sessionsRevoked }
    })
    // Why after the commit: the counters live in Redis or the main database, not in this transaction.
    await ctx.lockout.clear(tenant.id, userThrottleKeys(out.user))
    return { changed: true as const, sessionsRevoked: out.sessionsRevoked }
  } catch (err) {
    return auditFailure(ctx, tenant.id, 'PASSWORD_RESET', userId, err, meta)
  }
}

/**
 * POST /email/verify. The token is used and the user marked verified in one transaction, only while the
 * user's email is still the address the token was sent to. One EMAIL_VERIFIED row.
 */
export async function verifyEmail(
  ctx: AppContext,
  input: { tenantCode: string; token: string },
  meta: RequestMeta,
) {
  requireMailer(ctx)
  const tenant = await activeTenant(ctx, input.tenantCode)
  const db = ctx.dbs.forTenant(tenant.id)
  let userId: string | null = null
  try {
    await db.transaction().execute(async (trx) => {
      const now = new Date(ctx.clock.now())
      const token = await consumeToken(trx, tenant.id, sha256Hex(input.token), 'verify', now)
      if (!token) fail('INVALID_EMAIL_TOKEN')
      userId = token.userId
      const user = await lockUser(trx, tenant.id, token.userId)
      if (!user || user.status !== 'ACTIVE') fail('INVALID_EMAIL_TOKEN')
      if (user.email?.toLowerCase() !== token.email.toLowerCase()) fail('INVALID_EMAIL_TOKEN')
      await markEmailVerified(trx, tenant.id, user.id)
      await writeAudit(trx, {
        tenantId: tenant.id,
        action: 'EMAIL_VERIFIED',
        success: true,
        userId: user.id,
        meta,
      })
    })
    return { emailVerified: true as const }
  } catch (err) {
    return auditFailure(ctx, tenant.id, 'EMAIL_VERIFIED', userId, err, meta)
  }
}

/**
 * Queues a verification mail to a user (locked for the check): 400 without an email, 409 when verified;
 * past the hourly cap, nothing is queued and the row says so. One EMAIL_VERIFICATION_SENT row.
 */
async function sendVerification(
  ctx: AppContext,
  actor: Principal | null,
  tenant: TenantInfo,
  userId: string,
  meta: RequestMeta,
  authorize?: (trx: Transaction<Database>) => Promise<void>,
): Promise<void> {
  const db = ctx.dbs.forTenant(tenant.id)
  const row = (success: boolean, reason?: string) => ({
    tenantId: tenant.id,
    action: 'EMAIL_VERIFICATION_SENT' as const,
    success,
    userId,
    actor,
    errorMessage: reason,
    metadata: reason ? { reason } : {},
    meta,
  })
  let capped = false
  try {
    await db.transaction().execute(async (trx) => {
      const user = (await lockUser(trx, tenant.id, userId)) ?? fail('USER_NOT_FOUND')
      if (authorize) await authorize(trx)
      if (!user.email)
        fail('VALIDATION_ERROR', 'The user has no email', [
          { path: 'body', message: 'the user has no email' },
        ])
      if (user.email_verified) fail('EMAIL_ALREADY_VERIFIED')
      if ((await countRecentTokens(trx, tenant.id, userId, 'verify', hourAgo(ctx))) >= HOURLY_CAP) {
        capped = true
        return
      }
      await queueMail(ctx, trx, { tenant, userId, email: user.email, purpose: 'verify' })
      await writeAudit(trx, row(true))
    })
  } catch (err) {
    const known = err instanceof AppError
    await writeAudit(db, row(false, known ? err.code : 'INTERNAL_ERROR')).catch(() => undefined)
    throw err
  }
  if (capped) await writeAudit(db, row(false, 'hourly cap'))
  else mailerOf(ctx)?.nudge()
}

/** POST /me/email/verification: a verification mail to the caller. */
export async function sendMyEmailVerification(ctx: AppContext, actor: UserPrincipal, meta: RequestMeta) {
  requireMailer(ctx)
  const tenant = (await ctx.tenants.byId(actor.tenantId)) ?? fail('TENANT_NOT_FOUND')
  await sendVerification(ctx, actor, tenant, actor.userId, meta)
  return { accepted: true as const }
}

/** POST /users/:userId/email-verification: an administrator's; the hierarchy rule applies. */
export async function sendUserEmailVerification(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  meta: RequestMeta,
) {
  requireMailer(ctx)
  const tenant = (await ctx.tenants.byId(actor.tenantId)) ?? fail('TENANT_NOT_FOUND')
  await sendVerification(ctx, actor, tenant, userId, meta, (trx) =>
    assertMayActOnUser(trx, actor, { tenantId: tenant.id, userId, isPlatform: actor.isPlatform }),
  )
  return { accepted: true as const }
}

/**
 * After POST /register or POST /signup committed: with mail on and `verification` not off, a verification mail to a new
 * user with an unverified email. Never fails the registration: a problem leaves a failed
 * EMAIL_VERIFICATION_SENT row in the audit log (sendVerification writes it).
 */
export async function afterRegister(
  ctx: AppContext,
  tenantId: string,
  actor: Principal | null,
  user: { id: string; email: string | null; emailVerified: boolean },
  meta: RequestMeta,
): Promise<void> {
  if (!mailerOf(ctx) || !user.email || user.emailVerified) return
  const tenant = await ctx.tenants.byId(tenantId)
  if (!tenant || tenant.authConfig.email.verification === 'off') return
  await sendVerification(ctx, actor, tenant, user.id, meta).catch(() => undefined)
}

/**
 * At login, once the password passed: whether `verification: required` refuses this user (an email not
 * verified; users without one are exempt). Mail off: never, since nobody could verify.
 */
export function loginNeedsVerifiedEmail(
  ctx: AppContext,
  tenant: TenantInfo,
  user: { email: string | null; email_verified: boolean },
): boolean {
  return (
    mailerOf(ctx) !== undefined &&
    tenant.authConfig.email.verification === 'required' &&
    user.email !== null &&
    !user.email_verified
  )
}
