import type { AppContext } from '../../context.js'
import { writeAudit } from '../audit/write.js'
import { revokeSessions } from '../sessions/queries.js'

// A provider session and the Tessera session behind it end together (contract section 23): a Tessera
// logout, revocation, deactivation or reset ends the provider's (sessions' queries call the oidc queries);
// the provider's RP-initiated logout ends the Tessera session here.

/** Ends the Tessera session a provider session was signed in with, as a logout does (a LOGOUT row). */
export async function endTesseraSession(ctx: AppContext, tenantId: string, sessionId: string): Promise<void> {
  const now = new Date(ctx.clock.now())
  await ctx.dbs
    .forTenant(tenantId)
    .transaction()
    .execute(async (trx) => {
      const [ended] = await revokeSessions(trx, tenantId, [sessionId], 'logout', now)
      if (!ended) return
      await writeAudit(trx, {
        tenantId,
        action: 'LOGOUT',
        success: true,
        userId: ended.user_id,
        metadata: { reason: 'oidc_end_session' },
        meta: { ip: null, userAgent: null, requestId: null },
      })
    })
}
