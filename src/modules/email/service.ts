import type { Transaction } from 'kysely'
import type { AppContext, TenantInfo } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import type { Principal, UserPrincipal } from '../../security/principal.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { classifyIdentifier } from '../../lib/identifiers.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { checkPassword } from '../../lib/password-policy.js'
import { sha256Hex } from '../../lib/tokens.js'
import { writeAudit, type AuditAction, type RequestMeta } from '../audit/write.js'
import { endUserSessions, countActive } from '../sessions/queries.js'
import { userThrottleKeys } from '../account/lockout.js'
import { revokeKeysBehindUser } from '../client-keys/queries.js'
import { deleteUserMfaTokens, removeOtp } from '../otp/queries.js'
import { deleteUserIdentities } from '../federation/queries.js'
import { deleteUserPasskeys } from '../passkeys/queries.js'
import { findUserForLogin, lockUser, markEmailVerified, setPasswordHash } from '../users/queries.js'
import { applyEmailChange } from './change.js'
import { HOURLY_CAP, hourAgo, queueMail, requireMailer } from './outbox.js'
import { consumeToken, countRecentTokens, type TokenPurpose, type UsedToken } from './queries.js'
import { mailerOf } from './sender.js'

/** The id no user has: the statements run for an unknown identifier, as for a known one. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000'

/** An ACTIVE tenant by code, else 404 TENANT_NOT_FOUND (as at login). */
async function activeTenant(ctx: AppContext, code: string): Promise<TenantInfo> {
  const tenant = await ctx.tenants.byCode(code)
  if (!tenant || tenant.status !== 'ACTIVE') fail('TENANT_NOT_FOUND')
  return tenant
}

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
    const userVersion = locked.security_version
    await queueMail(ctx, trx, { tenant, userId: user.id, userVersion, email: user.email, purpose: 'reset' })
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
 * The user a used token names, its row locked: 400 INVALID_EMAIL_TOKEN unless it is ACTIVE and its
 * security_version is the one the token was issued at (its email, password and status unchanged since,
 * even if changed back).
 */
async function tokenUser(trx: Transaction<Database>, tenantId: string, token: UsedToken) {
  const user = await lockUser(trx, tenantId, token.userId)
  if (!user || user.status !== 'ACTIVE' || user.security_version !== token.userVersion) {
    fail('INVALID_EMAIL_TOKEN')
  }
  return user
}

/**
 * The first proof of a mailbox (contract section 26): whatever someone could have set up on an account
 * made with another person's address goes, in the reset's transaction: passkeys, second factor and recovery
 * codes. Sessions and pending second steps end with every reset; the Client Keys the user is behind are
 * revoked in the same commit, or right after it for a tenant routed to a database of its own. The linked
 * identities (section 24) and their pending link tokens go too: a provider account linked by the squatter
 * would otherwise still sign in.
 */
async function clearUnprovenSetup(trx: Transaction<Database>, tenantId: string, userId: string) {
  await deleteUserPasskeys(trx, tenantId, userId)
  await removeOtp(trx, tenantId, userId)
  await deleteUserIdentities(trx, tenantId, userId)
}

/**
 * POST /password/reset. Policy first (a refused password leaves the token usable), the hash off the
 * event loop, then one transaction: the token is used by one conditional UPDATE (of concurrent resets
 * exactly one wins), checked against the user's security_version, the hash replaced, every session
 * revoked, the address marked verified; when it was not verified before, also the passkeys, second factor
 * and recovery codes removed and the Client Keys the user is behind revoked (after the commit for a routed
 * tenant); every pending second step ends. After the commit the user's login throttling is cleared. One PASSWORD_RESET row (metadata.method "email").
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
  const seen: { userId: string | null } = { userId: null }
  const sameDatabase = !ctx.dbs.routedFor(tenant.id)
  let keysRevoked = 0
  let out: { user: { id: string }; throttleKeys: string[]; sessionsRevoked: number; firstProof: boolean }
  try {
    out = await db.transaction().execute(async (trx) => {
      const now = new Date(ctx.clock.now())
      const token = await consumeToken(trx, tenant.id, sha256Hex(input.token), ['reset'], now)
      if (!token) fail('INVALID_EMAIL_TOKEN')
      seen.userId = token.userId
      const user = await tokenUser(trx, tenant.id, token)
      // Why after tokenUser: the new hash moves security_version, which the check must read unmoved.
      await setPasswordHash(trx, tenant.id, user.id, hash)
      // Why only for the same address: the mailbox the link went to is the one proven.
      const proven = user.email !== null && user.email.toLowerCase() === token.email.toLowerCase()
      const firstProof = proven && !user.email_verified
      if (proven) await markEmailVerified(trx, tenant.id, user.id)
      if (firstProof) await clearUnprovenSetup(trx, tenant.id, user.id)
      // Why on every reset: a second step begun with the old password must not finish after it changed.
      await deleteUserMfaTokens(trx, tenant.id, user.id)
      // Why here when the tenant shares the main database: the keys go in the same commit as the rest.
      if (firstProof && sameDatabase) keysRevoked = await revokeKeysBehindUser(trx, tenant.id, user.id, now)
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
      return { user, throttleKeys: userThrottleKeys(user), sessionsRevoked, firstProof }
    })
  } catch (err) {
    return auditFailure(ctx, tenant.id, 'PASSWORD_RESET', seen.userId, err, meta)
  }
  // Why after the commit for a routed tenant: client_keys lives in the main database, not in its own.
  if (out.firstProof && !sameDatabase)
    keysRevoked = await revokeKeysBehindUser(ctx.dbs.main, tenant.id, out.user.id, new Date(ctx.clock.now()))
  if (keysRevoked > 0) await ctx.changed({ clientKeys: true })
  // Why after the commit: the counters live in Redis or the main database, not in this transaction.
  await ctx.lockout.clear(tenant.id, out.throttleKeys)
  return { changed: true as const, sessionsRevoked: out.sessionsRevoked }
}

/**
 * POST /email/verify. The token (a verification's or an email change's) is used and checked against the
 * user's security_version in one transaction. A verification marks the address verified while it is still
 * the user's email (one EMAIL_VERIFIED row); a change sets the new address (change.ts, one EMAIL_CHANGED
 * row), or, when another user took the address since, commits the used token and answers 409.
 */
export async function verifyEmail(
  ctx: AppContext,
  input: { tenantCode: string; token: string },
  meta: RequestMeta,
) {
  requireMailer(ctx)
  const tenant = await activeTenant(ctx, input.tenantCode)
  const db = ctx.dbs.forTenant(tenant.id)
  const tokenHash = sha256Hex(input.token)
  const seen: { userId: string | null; purpose: TokenPurpose } = { userId: null, purpose: 'verify' }
  try {
    const outcome = await db.transaction().execute(async (trx) => {
      const now = new Date(ctx.clock.now())
      const token = await consumeToken(trx, tenant.id, tokenHash, ['verify', 'change'], now)
      if (!token) fail('INVALID_EMAIL_TOKEN')
      seen.userId = token.userId
      seen.purpose = token.purpose
      const user = await tokenUser(trx, tenant.id, token)
      if (token.purpose === 'change') return applyEmailChange(ctx, trx, tenant, user, token.email, meta)
      if (user.email?.toLowerCase() !== token.email.toLowerCase()) fail('INVALID_EMAIL_TOKEN')
      await markEmailVerified(trx, tenant.id, user.id)
      await writeAudit(trx, {
        tenantId: tenant.id,
        action: 'EMAIL_VERIFIED',
        success: true,
        userId: user.id,
        meta,
      })
      return 'verified' as const
    })
    if (outcome === 'taken') fail('USER_ALREADY_EXISTS', 'Another user of the tenant has that email')
    if (outcome === 'changed') mailerOf(ctx)?.nudge()
    return { emailVerified: true as const }
  } catch (err) {
    const action: AuditAction = seen.purpose === 'change' ? 'EMAIL_CHANGED' : 'EMAIL_VERIFIED'
    if (!isUniqueViolation(err)) return auditFailure(ctx, tenant.id, action, seen.userId, err, meta)
    // The address was taken between the check and the update: the token is used all the same, as when
    // the check saw it taken.
    const now = new Date(ctx.clock.now())
    await db.transaction().execute((trx) => consumeToken(trx, tenant.id, tokenHash, ['change'], now))
    const conflict = new AppError('USER_ALREADY_EXISTS', 'Another user of the tenant has that email')
    return auditFailure(ctx, tenant.id, action, seen.userId, conflict, meta)
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
      const userVersion = user.security_version
      await queueMail(ctx, trx, { tenant, userId, userVersion, email: user.email, purpose: 'verify' })
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
