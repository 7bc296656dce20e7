// Shared by the session tests (test/account/sessions-*.test.ts): an app on a manual clock, and the
// session helpers of test/helpers/sessions.ts bound to it. The clock only moves forward; every test
// makes its own tenant, users and credentials after the moves that came before it.
import { buildTestApp, type TestLike } from '../helpers/app.js'
import { call, logoutWith, refresh, type As, type Res } from '../helpers/call.js'
import { auditRows, type UserFx } from '../helpers/fixtures.js'
import { openSession, refreshTokenRows, sessionRow, type Session } from '../helpers/sessions.js'
import { createManualClock } from '../../src/lib/clock.js'

export const DAY_S = 86_400
export const iso = (ms: number) => new Date(ms).toISOString()

/** The session ids a listing shows, in its order. */
export const ids = (res: Res<'listMySessions'> | Res<'listUserSessions'>) => res.data.items.map((i) => i.id)

/** The file's app (one a file, at its top level) and its clock, and the session helpers bound to them. */
export async function sessionsApp(t: TestLike) {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  return {
    app,
    clock,
    /** Logs a fixture user in from `ip` with `userAgent` (when given); the session with where and when. */
    open: (user: UserFx, userAgent?: string, ip?: string) => openSession(app, user, { userAgent, ip }),
    /** A session whose address and user agent do not matter. */
    plain: (user: UserFx) => openSession(app, user),
    refresh: (refreshToken: string, as: As = {}) => refresh(app, refreshToken, as),
    logout: (s: Session) => logoutWith(app, s.accessToken, s.refreshToken),
    mySessions: (s: Session) => call(app, 'listMySessions', { token: s.accessToken }),
    /** A session row straight from the database. */
    sessionRow: (tenantId: string, sid: string) => sessionRow(app, tenantId, sid),
    /** The refresh token rows of a user's sessions (every state). */
    userTokenRows: (user: UserFx) => refreshTokenRows(app, user),
    /** The tenant's SESSIONS_REVOKED rows, oldest first. */
    revokedRows: (tenantId: string) => auditRows(app, tenantId, 'SESSIONS_REVOKED'),
  }
}
