import { randomUUID } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { AppContext, TenantInfo } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import { encryptSecret } from '../../lib/crypto-box.js'
import { randomToken, sha256Hex } from '../../lib/tokens.js'
import { linkFor } from './config.js'
import { insertMail, insertTokenAndMail, voidTokens } from './queries.js'
import { mailerOf, messageContext, type Mailer } from './sender.js'
import { renderMessage, type Purpose } from './templates.js'

// What the email operations share: the mailer check, the hourly cap, and writing a message to the outbox
// in the caller's transaction (service.ts: reset and verification; change.ts: the email change).

/** Mails of one purpose that reach one user in an hour, at most (contract section 18). */
export const HOURLY_CAP = 3
/** How long a notice (no token) may wait in the outbox before it is dropped unsent. */
const NOTICE_TTL_SECONDS = 86_400

/** The mailer, or 503 MAIL_NOT_CONFIGURED when SMTP_URL is unset. */
export function requireMailer(ctx: AppContext): Mailer {
  return mailerOf(ctx) ?? fail('MAIL_NOT_CONFIGURED')
}

/** The start of the hourly cap's window. */
export const hourAgo = (ctx: AppContext) => new Date(ctx.clock.now() - 3_600_000)

/**
 * Makes a token and writes it with its message's outbox row in `trx`: the message is rendered now and
 * stored encrypted (it carries the link), so the raw token exists nowhere else at rest. `userVersion` is
 * the user's security_version read under the row lock: the token dies once it moves. A reset or a change
 * voids the user's earlier unused tokens of its purpose.
 */
export async function queueMail(
  ctx: AppContext,
  trx: Transaction<Database>,
  p: { tenant: TenantInfo; userId: string; userVersion: number; email: string; purpose: Purpose },
): Promise<void> {
  const cfg = p.tenant.authConfig.email
  const now = new Date(ctx.clock.now())
  const ttl = p.purpose === 'reset' ? cfg.passwordResetTtlSeconds : cfg.verificationTtlSeconds
  const token = randomToken(32)
  // Why the verification page for a change too: POST /email/verify takes both kinds of token.
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
  if (p.purpose !== 'verify') await voidTokens(trx, p.tenant.id, p.userId, p.purpose, now)
  await insertTokenAndMail(trx, {
    tenantId: p.tenant.id,
    userId: p.userId,
    purpose: p.purpose,
    tokenHash: sha256Hex(token),
    email: p.email,
    userVersion: p.userVersion,
    expiresAt: new Date(now.getTime() + ttl * 1000),
    now,
    outboxId: randomUUID(),
    messageEnc: encryptSecret(JSON.stringify(message), ctx.secretsKey, messageContext(p.tenant.id)),
  })
}

/** Writes the email-changed notice to `recipient` (the old address) in `trx`: no link, no token. */
export async function queueEmailChangedNotice(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenant: TenantInfo,
  recipient: string,
): Promise<void> {
  const now = new Date(ctx.clock.now())
  const message = renderMessage({
    purpose: 'email-changed',
    locale: tenant.authConfig.email.locale,
    tenantName: tenant.name,
    recipient,
  })
  await insertMail(trx, {
    outboxId: randomUUID(),
    tenantId: tenant.id,
    tokenId: null,
    recipient,
    messageEnc: encryptSecret(JSON.stringify(message), ctx.secretsKey, messageContext(tenant.id)),
    expiresAt: new Date(now.getTime() + NOTICE_TTL_SECONDS * 1000),
    now,
  })
}
