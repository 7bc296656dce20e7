import type { Transaction } from 'kysely'
import type { AppContext, TenantInfo } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError, fail } from '../../errors.js'
import { normalizeEmail } from '../../lib/identifiers.js'
import type { UserPrincipal } from '../../security/principal.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { emailTakenByOther, lockUser, updateUserRow } from '../users/queries.js'
import { HOURLY_CAP, hourAgo, queueEmailChangedNotice, queueMail, requireMailer } from './outbox.js'
import { countRecentTokens } from './queries.js'
import { mailerOf } from './sender.js'

// The email change (contract section 26): POST /me/email mails a link to the new address and changes
// nothing; POST /email/verify with that link's token (service.ts's verifyEmail) makes the change here.

/** A VALIDATION_ERROR about the body's `email`. */
function badEmail(message: string): never {
  return fail('VALIDATION_ERROR', 'Request validation failed', [{ path: 'body.email', message }])
}

/**
 * POST /me/email: mails a confirmation link (a `change` token whose address is the new one) to the new
 * address. 400 for an address that is no address, a tenant that does not sign in by email, or the
 * caller's own email; 409 USER_ALREADY_EXISTS when another user of the tenant has it; past the hourly cap,
 * the same 202 and no mail. The user row is locked for the checks and the cap. One EMAIL_CHANGE_REQUESTED
 * row, success or failure, that never carries the address.
 */
export async function changeMyEmail(
  ctx: AppContext,
  actor: UserPrincipal,
  input: { email: string },
  meta: RequestMeta,
) {
  requireMailer(ctx)
  const tenantId = actor.tenantId
  const db = ctx.dbs.forTenant(tenantId)
  const row = (success: boolean, reason?: string) => ({
    tenantId,
    action: 'EMAIL_CHANGE_REQUESTED' as const,
    success,
    userId: actor.userId,
    actor,
    errorMessage: reason,
    metadata: reason ? { reason } : {},
    meta,
  })
  let capped = false
  try {
    const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
    const email = normalizeEmail(input.email) ?? badEmail('is not a valid email')
    if (!tenant.authConfig.loginIdentifiers.includes('email'))
      badEmail('the tenant does not sign in by email')
    await db.transaction().execute(async (trx) => {
      const user = (await lockUser(trx, tenantId, actor.userId)) ?? fail('USER_NOT_FOUND')
      if (user.email?.toLowerCase() === email) badEmail('is your email already')
      if (await emailTakenByOther(trx, tenantId, email, user.id)) {
        fail('USER_ALREADY_EXISTS', 'Another user of the tenant has that email')
      }
      if ((await countRecentTokens(trx, tenantId, user.id, 'change', hourAgo(ctx))) >= HOURLY_CAP) {
        capped = true
        return
      }
      const userVersion = user.security_version
      await queueMail(ctx, trx, { tenant, userId: user.id, userVersion, email, purpose: 'change' })
      await writeAudit(trx, row(true))
    })
  } catch (err) {
    // Why the code only: an AppError's message or details could echo the address.
    await writeAudit(db, row(false, err instanceof AppError ? err.code : 'INTERNAL_ERROR')).catch(
      () => undefined,
    )
    throw err
  }
  if (capped) await writeAudit(db, row(false, 'hourly cap'))
  else mailerOf(ctx)?.nudge()
  return { accepted: true as const }
}

/**
 * The change a `change` token asks for, inside verifyEmail's transaction (the user locked, the token
 * checked against its security_version). 'taken' when another user of the tenant has the address now:
 * nothing is changed, and the caller commits the used token and answers 409. Otherwise the email becomes
 * the new address, verified (which moves security_version, so every other mail token of the user dies),
 * the old address gets a notice without a link, and one EMAIL_CHANGED row is written.
 */
export async function applyEmailChange(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenant: TenantInfo,
  user: { id: string; email: string | null },
  newEmail: string,
  meta: RequestMeta,
): Promise<'taken' | 'changed'> {
  if (await emailTakenByOther(trx, tenant.id, newEmail, user.id)) return 'taken'
  await updateUserRow(trx, tenant.id, user.id, { email: newEmail, email_verified: true })
  if (user.email !== null) await queueEmailChangedNotice(ctx, trx, tenant, user.email)
  await writeAudit(trx, {
    tenantId: tenant.id,
    action: 'EMAIL_CHANGED',
    success: true,
    userId: user.id,
    meta,
  })
  return 'changed'
}
