import { AppError } from '../errors.js'
import type { SessionLookup } from './lookups.js'
import type { Principal } from './principal.js'

/** How long a sign-in counts as recent for the operations marked `x-recent-auth` (contract section 22). */
const RECENT_AUTH_SECONDS = 600

// Why some slack ahead: `auth_time` is the session row's creation, stamped by whichever instance took the
// login; the same 60 s that `iat` is allowed covers clocks a little apart.
const AHEAD_SECONDS = 60

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const reauthenticate = () =>
  new AppError('REAUTHENTICATION_REQUIRED', 'Sign in again: this needs a sign-in of the last 10 minutes')

/**
 * For an operation that needs a recent sign-in: an access token whose `auth_time` is absent or more than
 * RECENT_AUTH_SECONDS old is 401 REAUTHENTICATION_REQUIRED, and so is one whose `sid` names no live session of
 * its user opened at that `auth_time` (contract section 26: whoever holds the tenant's secret can sign any
 * `auth_time`, but cannot open a session). One session lookup, only for these operations and only once the
 * time passed. `userGone`, when given, is thrown for a user that no longer exists; `maxAgeSeconds` narrows the
 * 600 seconds (an OpenID request's `max_age`). Client Keys (no sign-in behind them) and the operator pass.
 */
export async function assertRecentSignIn(
  p: Principal,
  nowMs: number,
  sessions: SessionLookup,
  userGone?: () => Error,
  maxAgeSeconds = RECENT_AUTH_SECONDS,
): Promise<void> {
  if (p.kind !== 'user') return
  const authTime = p.authTime ?? Number.NEGATIVE_INFINITY
  const age = Math.floor(nowMs / 1000) - authTime
  if (!(age <= maxAgeSeconds && age >= -AHEAD_SECONDS)) throw reauthenticate()
  if (!UUID.test(p.sessionId) || !UUID.test(p.userId)) throw reauthenticate()
  const found = await sessions(p.tenantId, p.sessionId, p.userId, nowMs)
  // Why 404 where declared: a deleted user's token has no session left, and the operations on one's own
  // user (/me) answer USER_NOT_FOUND for it, as they did before the session was read.
  if (!found.userExists && userGone) throw userGone()
  if (found.loginAt !== authTime) throw reauthenticate()
}
