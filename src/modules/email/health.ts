import type { AppContext } from '../../context.js'
import type { Data } from '../../lib/route.js'
import { mailerOf } from './sender.js'

type MailHealth = Data<'getHealth'>['mail']

/**
 * The outbox's part of GET /health, always an object with a `status` (contract section 1): `disabled`
 * with mail off; `failing` when this instance's last delivery was refused by the SMTP server; `up`
 * otherwise, with the backlog. A database that does not answer reports no backlog: the database's own
 * status says so already. Mail never makes the service `degraded`: no request waits for it.
 */
export async function mailHealth(ctx: AppContext): Promise<MailHealth> {
  const mailer = mailerOf(ctx)
  if (!mailer) return { status: 'disabled' }
  const status = mailer.lastDeliveryFailed ? 'failing' : 'up'
  const b = await mailer.backlog().catch(() => null)
  return b ? { status, pending: b.pending, oldestPendingSeconds: b.oldestSeconds } : { status }
}
