import { tdb, type AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import { assertNotOwnUser, type Principal } from '../../security/principal.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { findUserById } from '../users/queries.js'
import { userThrottleKeys } from './lockout.js'

/**
 * POST /users/:userId/unlock: forgets the throttling state of every identifier of the user (a running
 * lock ends, the doubling starts over) and the failures of its secret budget. Hierarchy rule applies;
 * never the user the credential stands for (FORBIDDEN). One ACCOUNT_UNLOCKED row.
 */
export async function unlockUser(ctx: AppContext, actor: Principal, userId: string, meta: RequestMeta) {
  const { tenantId } = actor
  const db = tdb(ctx, actor)
  return audited(
    db,
    { tenantId, action: 'ACCOUNT_UNLOCKED', actor, meta, note: { userId: null, metadata: {} } },
    {
      // Why before the transaction: the counters are in Redis or the main database, not in this one.
      before: async (note) => {
        // Why: clearing its own user's counters would give a stolen credential a fresh budget of guesses.
        assertNotOwnUser(actor, userId, 'Another administrator unlocks your account')
        const user = (await findUserById(db, tenantId, userId)) ?? fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(db, actor, { tenantId, userId, isPlatform: actor.isPlatform })
        await ctx.lockout.clear(tenantId, userThrottleKeys(user))
        await ctx.secretBudget.clear(tenantId, userId)
      },
      act: async () => ({ unlocked: true as const }),
    },
  )
}
