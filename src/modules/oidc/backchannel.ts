import type { FastifyBaseLogger } from 'fastify'
import type { AppContext } from '../../context.js'
import { claimOwedLogouts, type OwedLogout } from './payload-queries.js'
import type { ProviderPool } from './pool.js'

// Back-channel logout (contract section 23) for provider sessions that ended on Tessera's side: a logout, a
// revocation, a deactivation or a reset. They end inside the transaction that ends the Tessera session
// (sessions' queries), which queues a logout token per client with a grant in them; this sends the queue.
// Why a queue in the database, not a call after the commit: a rolled-back revocation tells nobody, and of
// several instances exactly one sends each token (a row is claimed once).

const EVERY_MS = 1_000
const BATCH = 50

/** Sends one owed logout token through the tenant's provider (its key, its client's URI). */
async function send(ctx: AppContext, pool: ProviderPool, owed: OwedLogout): Promise<void> {
  const tenant = await ctx.tenants.byId(owed.tenantId)
  const pooled = tenant ? await pool.get(tenant.code) : null
  const client = pooled ? await pooled.provider.Client.find(owed.clientId) : undefined
  if (!client?.backchannelLogoutUri) return
  // Why the cast: @types/oidc-provider trails the library and does not declare this method of Client.
  const logout = client as unknown as { backchannelLogout(sub: string, sid: string): Promise<void> }
  await logout.backchannelLogout(owed.accountId, owed.sid)
}

/** Starts sending owed logout tokens every second, from every database; returns the stop. */
export function startLogoutSender(ctx: AppContext, pool: ProviderPool, log: FastifyBaseLogger): () => void {
  let busy = false
  const tick = async () => {
    if (busy) return
    busy = true
    try {
      for (const db of [ctx.dbs.main, ...ctx.dbs.routedGroups().map((g) => g.db)]) {
        for (const owed of await claimOwedLogouts(db, BATCH)) {
          await send(ctx, pool, owed).catch((err: unknown) =>
            log.warn({ err, clientId: owed.clientId }, 'back-channel logout not delivered'),
          )
        }
      }
    } catch (err) {
      log.warn({ err }, 'back-channel logouts: the queue could not be read; the next pass tries')
    } finally {
      busy = false
    }
  }
  const timer = setInterval(() => void tick(), EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}
