import { AppError } from '../errors.js'
import type { Principal } from './principal.js'

/** How long a sign-in counts as recent for the operations marked `x-recent-auth` (contract section 22). */
const RECENT_AUTH_SECONDS = 600

// Why some slack ahead: `auth_time` is the session row's creation, stamped by whichever instance took the
// login; the same 60 s that `iat` is allowed covers clocks a little apart.
const AHEAD_SECONDS = 60

/**
 * For an operation that needs a recent sign-in: an access token whose `auth_time` is absent or more than
 * RECENT_AUTH_SECONDS old is 401 REAUTHENTICATION_REQUIRED. Client Keys (no sign-in behind them) and the
 * operator pass.
 */
export function assertRecentSignIn(p: Principal, nowMs: number): void {
  if (p.kind !== 'user') return
  const age = Math.floor(nowMs / 1000) - (p.authTime ?? Number.NEGATIVE_INFINITY)
  if (!(age <= RECENT_AUTH_SECONDS && age >= -AHEAD_SECONDS)) {
    throw new AppError(
      'REAUTHENTICATION_REQUIRED',
      'Sign in again: this needs a sign-in of the last 10 minutes',
    )
  }
}
