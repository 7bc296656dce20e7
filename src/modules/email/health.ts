import type { AppContext } from '../../context.js'
import { mailerOf } from './sender.js'

/**
 * The outbox's part of GET /health: `{ mail: { pending, oldestPendingSeconds } }` with mail on, nothing
 * with it off (so the answer stays what it was). A database that does not answer reports no backlog:
 * the database's own status says so already.
 */
export async function mailHealth(
  ctx: AppContext,
): Promise<{ mail?: { pending: number; oldestPendingSeconds: number } }> {
  const mailer = mailerOf(ctx)
  if (!mailer) return {}
  const b = await mailer.backlog().catch(() => null)
  return b ? { mail: { pending: b.pending, oldestPendingSeconds: b.oldestSeconds } } : {}
}
