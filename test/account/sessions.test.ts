import t from 'tap'
import { sql } from 'kysely'
import { buildTestApp } from '../helpers/app.js'
import { byKey, bySelf, byUser, matchOne } from '../helpers/audit.js'
import { defaultBackend } from '../helpers/db.js'
import {
  auditRows,
  createKey,
  createTenant,
  createUser,
  freshIp,
  insertRole,
  keyCred,
  PASSWORD,
  platformTenant,
  sidOf,
  UNKNOWN_ID,
  userWithToken,
  waitFor,
  type UserFx,
} from '../helpers/fixtures.js'
import { call, loginTokens, type Res } from '../helpers/call.js'
import { createManualClock } from '../../src/lib/clock.js'

// One app and one manual clock for the file. The clock only moves forward; every test makes its own
// tenant, users and credentials after the moves that came before it.
const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })

const DAY_S = 86_400
const iso = (ms: number) => new Date(ms).toISOString()

interface Session {
  accessToken: string
  refreshToken: string
  sid: string
  ip: string
  at: number
}

/** Logs a fixture user in from `ip` with `userAgent` (when given); the session with where and when. */
async function open(user: UserFx, userAgent?: string, ip = freshIp()): Promise<Session> {
  const res = await call(
    app,
    'login',
    { ip, headers: userAgent === undefined ? {} : { 'user-agent': userAgent } },
    { body: { tenantCode: user.tenant.code, identifier: user.email, password: PASSWORD } },
  )
  if (res.status !== 200) throw new Error(`login failed: ${res.raw}`)
  return { ...res.data, sid: sidOf(res.data.accessToken), ip, at: clock.now() }
}

/** A session opened through `loginTokens` (where it came from does not matter). */
async function plain(user: UserFx): Promise<Session> {
  const tokens = await loginTokens(app, user)
  return { ...tokens, sid: sidOf(tokens.accessToken), ip: '', at: clock.now() }
}

const refresh = (refreshToken: string, as: { ip?: string; headers?: Record<string, string> } = {}) =>
  call(app, 'refresh', as, { body: { refreshToken } })

const logout = (s: Session) =>
  call(app, 'logout', { token: s.accessToken }, { body: { refreshToken: s.refreshToken } })

const mySessions = (s: Session) => call(app, 'listMySessions', { token: s.accessToken })

const ids = (res: Res<'listMySessions'> | Res<'listUserSessions'>) => res.data.items.map((i) => i.id)

/** A session row straight from the database. */
function sessionRow(tenantId: string, sid: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('sessions')
    .select(['id', 'revoked_at', 'revoked_reason', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', sid)
    .executeTakeFirstOrThrow()
}

/** The refresh token rows of a user's sessions (every state). */
function userTokenRows(tenantId: string, userId: string) {
  return app.ctx.dbs
    .forTenant(tenantId)
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select(['refresh_tokens.id', 'refresh_tokens.session_id', 'refresh_tokens.revoked_at'])
    .where('refresh_tokens.tenant_id', '=', tenantId)
    .where('sessions.user_id', '=', userId)
    .execute()
}

/** The tenant's SESSIONS_REVOKED rows, oldest first. */
const revokedRows = (tenantId: string) => auditRows(app, tenantId, 'SESSIONS_REVOKED')

t.test('listMySessions: GET /me/sessions', async (t) => {
  t.test(
    'listMySessions: 200 lists only active sessions, newest first, with ip, userAgent, times and current',
    async (t) => {
      const tenant = await createTenant(app, { refreshTokenExpiresIn: 60 })
      const user = await createUser(app, tenant, { roles: ['user'] })
      const other = await createUser(app, tenant, { roles: ['user'] })
      const expired = await open(user, 'agent-expired')
      clock.advance(61_000)
      const loggedOut = await open(user, 'agent-logged-out')
      t.same((await logout(loggedOut)).data, { revoked: true })
      clock.advance(1_000)
      const older = await open(user, 'agent-older/1.0')
      clock.advance(1_000)
      const current = await open(user, 'agent-current/2.0')
      await open(other, 'agent-someone-else')
      clock.advance(1_000)

      const res = await mySessions(current)
      t.equal(res.status, 200)
      t.same(ids(res), [current.sid, older.sid], 'newest first; the revoked and the expired one are absent')
      t.same(res.data.items[0], {
        id: current.sid,
        createdAt: iso(current.at),
        lastUsedAt: iso(current.at),
        expiresAt: iso(current.at + 60_000),
        ip: current.ip,
        userAgent: 'agent-current/2.0',
        current: true,
      })
      t.same(res.data.items[1], {
        id: older.sid,
        createdAt: iso(older.at),
        lastUsedAt: iso(older.at),
        expiresAt: iso(older.at + 60_000),
        ip: older.ip,
        userAgent: 'agent-older/1.0',
        current: false,
      })

      const fromOlder = await mySessions(older)
      t.same(
        (fromOlder.data.items as { id: string; current: boolean }[]).map((i) => [i.id, i.current]),
        [
          [current.sid, false],
          [older.sid, true],
        ],
        '`current` follows the calling token',
      )

      const expiredRow = await sessionRow(tenant.id, expired.sid)
      t.equal(expiredRow.revoked_at, null, 'the expired session was never revoked: it is absent for its age')
      t.ok((await sessionRow(tenant.id, loggedOut.sid)).revoked_at, 'the logged-out session is revoked')
    },
  )

  t.test(
    'listMySessions: 200 after POST /refresh from another ip and user agent, the session shows them and lastUsedAt',
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant, { roles: ['user'] })
      const s = await open(user, 'agent-at-login')
      clock.advance(5_000)
      const ip = freshIp()
      const rotated = await refresh(s.refreshToken, { ip, headers: { 'user-agent': 'agent-at-refresh' } })
      t.equal(rotated.status, 200)
      const refreshedAt = clock.now()
      t.equal(sidOf(rotated.data.accessToken), s.sid, 'the refresh keeps the session')
      clock.advance(1_000)

      const res = await call(app, 'listMySessions', { token: rotated.data.accessToken })
      t.equal(res.status, 200)
      t.same(res.data.items, [
        {
          id: s.sid,
          createdAt: iso(s.at),
          lastUsedAt: iso(refreshedAt),
          expiresAt: iso(refreshedAt + 30 * DAY_S * 1000),
          ip,
          userAgent: 'agent-at-refresh',
          current: true,
        },
      ])
      t.not(ip, s.ip)
      const viaOld = await mySessions(s)
      t.same(viaOld.data.items, res.data.items, 'the older access token of the same session sees the same')
    },
  )

  t.test('listMySessions: 200 with no items for a user without sessions', async (t) => {
    const tenant = await createTenant(app)
    const user = await userWithToken(app, tenant, { roles: ['user'], authTime: null })
    const res = await call(app, 'listMySessions', user.cred)
    t.equal(res.status, 200)
    t.same(res.data, { items: [] })
  })
})

t.test('revokeMySession: DELETE /me/sessions/:sessionId', async (t) => {
  t.test(
    'revokeMySession: 200 {revoked:true}; its refresh token is 401 at once, its access token lives until exp',
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant, { roles: ['user'] })
      const caller = await plain(user)
      const victim = await plain(user)
      // A rotated session: both its tokens must be revoked.
      const victimNext = await refresh(victim.refreshToken)
      t.equal(victimNext.status, 200)

      const res = await call(
        app,
        'revokeMySession',
        {
          token: caller.accessToken,
        },
        { params: { sessionId: victim.sid } },
      )
      t.equal(res.status, 200)
      t.same(res.data, { revoked: true })

      const again = await refresh(victimNext.data.refreshToken)
      t.equal(again.status, 401)
      t.equal(again.code, 'INVALID_REFRESH_TOKEN')
      const row = await sessionRow(tenant.id, victim.sid)
      t.ok(row.revoked_at, 'sessions.revoked_at is set')
      t.equal(row.revoked_reason, 'revoked_by_user')
      const tokens = (await userTokenRows(tenant.id, user.id)).filter((r) => r.session_id === victim.sid)
      t.equal(tokens.length, 2)
      t.ok(
        tokens.every((r) => r.revoked_at !== null),
        'every refresh token of the session is revoked',
      )
      t.same(ids(await mySessions(caller)), [caller.sid], 'the list no longer shows it')
      t.equal((await refresh(caller.refreshToken)).status, 200, 'the calling session is untouched')

      matchOne(t, await revokedRows(tenant.id), {
        success: true,
        ...bySelf(user.id),
        error_message: null,
        metadata: { sessionsRevoked: 1 },
      })

      const me = await call(app, 'getMe', { token: victim.accessToken })
      t.equal(me.status, 200, 'the revoked session’s access token still works before exp')
      t.equal(me.data.id, user.id)
      clock.advance(900_000)
      const late = await call(app, 'getMe', { token: victim.accessToken })
      t.equal(late.status, 401)
      t.equal(late.code, 'TOKEN_EXPIRED', 'and stops at exp')
    },
  )

  t.test('revokeMySession: 200 for the calling session itself', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const s = await plain(user)
    const res = await call(app, 'revokeMySession', { token: s.accessToken }, { params: { sessionId: s.sid } })
    t.equal(res.status, 200)
    t.same(res.data, { revoked: true })
    t.equal((await refresh(s.refreshToken)).code, 'INVALID_REFRESH_TOKEN')
    t.same(ids(await mySessions(s)), [], 'the access token still lists, and sees no session')
  })

  t.test(
    'revokeMySession: 404 SESSION_NOT_FOUND for an unknown id, another user’s and another tenant’s session',
    async (t) => {
      const tenant = await createTenant(app)
      const otherTenant = await createTenant(app)
      const user = await createUser(app, tenant, { roles: ['user'] })
      const neighbour = await createUser(app, tenant, { roles: ['user'] })
      const stranger = await createUser(app, otherTenant, { roles: ['user'] })
      const caller = await plain(user)
      const theirs = await plain(neighbour)
      const foreign = await plain(stranger)

      for (const [what, id] of [
        ['unknown', UNKNOWN_ID],
        ['another user’s', theirs.sid],
        ['another tenant’s', foreign.sid],
      ] as const) {
        const res = await call(
          app,
          'revokeMySession',
          { token: caller.accessToken },
          { params: { sessionId: id } },
        )
        t.equal(res.status, 404, what)
        t.equal(res.code, 'SESSION_NOT_FOUND', what)
      }

      t.equal((await sessionRow(tenant.id, theirs.sid)).revoked_at, null, 'their session row is untouched')
      t.equal((await sessionRow(otherTenant.id, foreign.sid)).revoked_at, null)
      t.equal((await refresh(theirs.refreshToken)).status, 200, 'their refresh token still refreshes')
      t.equal((await refresh(foreign.refreshToken)).status, 200)

      const rows = await revokedRows(tenant.id)
      t.equal(rows.length, 3, 'one failure row per call')
      for (const row of rows) {
        t.match(row, {
          success: false,
          error_message: 'SESSION_NOT_FOUND',
          ...bySelf(user.id),
        })
        t.notOk('sessionsRevoked' in row.metadata, 'nothing was revoked')
      }
      t.equal((await revokedRows(otherTenant.id)).length, 0, 'nothing written in the other tenant')
    },
  )

  t.test('revokeMySession: 404 SESSION_NOT_FOUND for an already revoked session', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const caller = await plain(user)
    const gone = await plain(user)
    t.equal(
      (await call(app, 'revokeMySession', { token: caller.accessToken }, { params: { sessionId: gone.sid } }))
        .status,
      200,
    )
    const res = await call(
      app,
      'revokeMySession',
      { token: caller.accessToken },
      { params: { sessionId: gone.sid } },
    )
    t.equal(res.status, 404)
    t.equal(res.code, 'SESSION_NOT_FOUND')
    const loggedOut = await plain(user)
    t.same((await logout(loggedOut)).data, { revoked: true })
    const afterLogout = await call(
      app,
      'revokeMySession',
      {
        token: caller.accessToken,
      },
      { params: { sessionId: loggedOut.sid } },
    )
    t.equal(afterLogout.code, 'SESSION_NOT_FOUND', 'a logged-out session too')
    t.match(await revokedRows(tenant.id), [
      { success: true, metadata: { sessionsRevoked: 1 } },
      { success: false, error_message: 'SESSION_NOT_FOUND', actor_id: user.id, user_id: user.id },
      { success: false, error_message: 'SESSION_NOT_FOUND', actor_id: user.id, user_id: user.id },
    ])
  })

  t.test(
    'revokeMySession: 400 VALIDATION_ERROR for a sessionId that is not a UUID; no audit row',
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant, { roles: ['user'] })
      const s = await plain(user)
      for (const bad of ['not-a-uuid', '123', `${s.sid}x`]) {
        const res = await call(
          app,
          'revokeMySession',
          { token: s.accessToken },
          { params: { sessionId: bad } },
        )
        t.equal(res.status, 400, bad)
        t.equal(res.code, 'VALIDATION_ERROR', bad)
      }
      t.equal((await revokedRows(tenant.id)).length, 0)
      t.equal((await refresh(s.refreshToken)).status, 200)
    },
  )
})

t.test('revokeMyOtherSessions: POST /me/sessions/revoke-others', async (t) => {
  t.test(
    'revokeMyOtherSessions: 200 {revoked:n} for the other active sessions; the calling one survives; then 0',
    async (t) => {
      const tenant = await createTenant(app, { refreshTokenExpiresIn: 60 })
      const user = await createUser(app, tenant, { roles: ['user'] })
      const neighbour = await createUser(app, tenant, { roles: ['user'] })
      const stale = await plain(user)
      clock.advance(61_000)
      const loggedOut = await plain(user)
      t.same((await logout(loggedOut)).data, { revoked: true })
      const caller = await plain(user)
      const b = await plain(user)
      const c = await plain(user)
      const theirs = await plain(neighbour)

      const res = await call(app, 'revokeMyOtherSessions', { token: caller.accessToken })
      t.equal(res.status, 200)
      t.same(res.data, { revoked: 2 }, 'the expired and the logged-out session are not counted')

      for (const s of [b, c]) {
        const r = await refresh(s.refreshToken)
        t.equal(r.status, 401)
        t.equal(r.code, 'INVALID_REFRESH_TOKEN')
        const row = await sessionRow(tenant.id, s.sid)
        t.ok(row.revoked_at)
        t.equal(row.revoked_reason, 'revoked_by_user')
      }
      t.equal((await sessionRow(tenant.id, caller.sid)).revoked_at, null, 'the calling session stays')
      t.equal((await sessionRow(tenant.id, loggedOut.sid)).revoked_reason, 'logout', 'left as it was')
      t.equal((await refresh(stale.refreshToken)).status, 401)
      const live = (await userTokenRows(tenant.id, user.id)).filter((r) => r.revoked_at === null)
      t.same(
        live.map((r) => r.session_id),
        [caller.sid],
        'only the calling session keeps a live refresh token',
      )
      const next = await refresh(caller.refreshToken)
      t.equal(next.status, 200, 'the calling session still refreshes')
      t.equal((await refresh(theirs.refreshToken)).status, 200, 'another user’s session is untouched')
      t.same(ids(await mySessions(caller)), [caller.sid])

      const second = await call(app, 'revokeMyOtherSessions', { token: caller.accessToken }, { body: {} })
      t.equal(second.status, 200)
      t.same(second.data, { revoked: 0 })
      t.equal((await refresh(next.data.refreshToken)).status, 200, 'and still after the second call')

      t.match(await revokedRows(tenant.id), [
        {
          success: true,
          ...bySelf(user.id),
          error_message: null,
          metadata: { sessionsRevoked: 2 },
        },
        { success: true, actor_id: user.id, user_id: user.id, metadata: { sessionsRevoked: 0 } },
      ])
    },
  )
  t.test(
    'revokeMyOtherSessions: a login racing the call leaves no active session without a live refresh token',
    {
      skip:
        defaultBackend() === 'postgres' ? false : 'needs PostgreSQL: PGlite runs one transaction at a time',
    },
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant, { roles: ['user'] })
      const caller = await plain(user)
      const other = await plain(user)
      const db = app.ctx.dbs.forTenant(tenant.id)
      const lockWaits = async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
        return rows[0]?.n ?? 0
      }
      // Why hold the other session's row: the call then waits inside its transaction, after its first
      // statement began, and a login can commit before the call goes on.
      let release = () => {}
      const released = new Promise<void>((r) => (release = r))
      let held = () => {}
      const isHeld = new Promise<void>((r) => (held = r))
      const holder = db.transaction().execute(async (trx) => {
        await trx.selectFrom('sessions').select('id').where('id', '=', other.sid).forUpdate().execute()
        held()
        await released
      })
      await isHeld
      const revoking = call(app, 'revokeMyOtherSessions', { token: caller.accessToken })
      t.ok((await waitFor(async () => (await lockWaits()) >= 1)) >= 0, 'the call waits on the held row')
      let settled = false
      const opening = plain(user).finally(() => (settled = true))
      // The login either completes meanwhile or waits for the call (the user row, when the call locks it).
      t.ok((await waitFor(async () => settled || (await lockWaits()) >= 2)) >= 0)
      release()
      await holder
      const [res, fresh] = await Promise.all([revoking, opening])
      t.equal(res.status, 200)
      const row = await sessionRow(tenant.id, fresh.sid)
      const listed = ids(await mySessions(caller)).includes(fresh.sid)
      const next = await refresh(fresh.refreshToken)
      t.equal(listed, row.revoked_at === null, 'the list shows the new session exactly when it is active')
      t.equal(
        next.status === 200,
        row.revoked_at === null,
        'the new session is either revoked or its refresh token still refreshes',
      )
    },
  )
})

t.test('listUserSessions: GET /users/:userId/sessions', async (t) => {
  t.test(
    'listUserSessions: 200 for an admin and for a Client Key with users:read, newest first, without current',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const target = await createUser(app, tenant, { roles: ['user'] })
      const first = await open(target, 'agent-first')
      clock.advance(1_000)
      const second = await open(target, 'agent-second')
      clock.advance(1_000)
      const gone = await plain(target)
      t.same((await logout(gone)).data, { revoked: true })

      const res = await call(app, 'listUserSessions', admin.cred, { params: { userId: target.id } })
      t.equal(res.status, 200)
      t.same(res.data.items, [
        {
          id: second.sid,
          createdAt: iso(second.at),
          lastUsedAt: iso(second.at),
          expiresAt: iso(second.at + 30 * DAY_S * 1000),
          ip: second.ip,
          userAgent: 'agent-second',
        },
        {
          id: first.sid,
          createdAt: iso(first.at),
          lastUsedAt: iso(first.at),
          expiresAt: iso(first.at + 30 * DAY_S * 1000),
          ip: first.ip,
          userAgent: 'agent-first',
        },
      ])
      t.ok(
        (res.data.items as object[]).every((i) => !('current' in i)),
        'no `current` field',
      )

      const byKey = await call(app, 'listUserSessions', await keyCred(app, tenant, ['users:read']), {
        params: { userId: target.id },
      })
      t.equal(byKey.status, 200)
      t.same(byKey.data, res.data)
      t.equal((await revokedRows(tenant.id)).length, 0, 'listing writes no audit row')
    },
  )

  t.test('listUserSessions: 404 USER_NOT_FOUND for an unknown id and another tenant’s user', async (t) => {
    const tenant = await createTenant(app)
    const otherTenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const stranger = await createUser(app, otherTenant, { roles: ['user'] })
    await plain(stranger)
    for (const id of [UNKNOWN_ID, stranger.id]) {
      const res = await call(app, 'listUserSessions', admin.cred, { params: { userId: id } })
      t.equal(res.status, 404)
      t.equal(res.code, 'USER_NOT_FOUND')
    }
  })

  t.test(
    'listUserSessions: 403 ROLE_HIERARCHY_VIOLATION on an equal-ranked admin; 200 on oneself; admin:* exempt',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const peer = await createUser(app, tenant, { roles: ['admin'] })
      await plain(peer)
      const res = await call(app, 'listUserSessions', admin.cred, { params: { userId: peer.id } })
      t.equal(res.status, 403)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')

      const key = await keyCred(app, tenant, ['users:read'])
      const beyond = await call(app, 'listUserSessions', key, { params: { userId: peer.id } })
      t.equal(beyond.code, 'ROLE_HIERARCHY_VIOLATION', 'a key whose scopes do not cover the target')

      const own = await call(app, 'listUserSessions', admin.cred, { params: { userId: admin.id } })
      t.equal(own.status, 200, 'the rule names acts on another user')

      const platform = await platformTenant(app)
      const root = await userWithToken(app, platform, { roles: ['admin'] })
      const platformPeer = await createUser(app, platform, { roles: ['admin'] })
      const s = await plain(platformPeer)
      const exempt = await call(app, 'listUserSessions', root.cred, { params: { userId: platformPeer.id } })
      t.equal(exempt.status, 200, 'a holder of admin:* may list a peer’s sessions')
      t.same(ids(exempt), [s.sid])
    },
  )

  t.test('listUserSessions: 403 FORBIDDEN without users:read', async (t) => {
    const tenant = await createTenant(app)
    const target = await createUser(app, tenant, { roles: ['user'] })
    const plainUser = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await call(app, 'listUserSessions', plainUser.cred, { params: { userId: target.id } })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    const key = await keyCred(app, tenant, ['users:update'])
    t.equal(
      (await call(app, 'listUserSessions', key, { params: { userId: target.id } })).code,
      'FORBIDDEN',
      'a key without the users:read scope',
    )
  })

  t.test('listUserSessions: 400 VALIDATION_ERROR for a userId that is not a UUID', async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'listUserSessions', admin.cred, { params: { userId: 'not-a-uuid' } })
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
  })
})

t.test('revokeUserSessions: DELETE /users/:userId/sessions', async (t) => {
  t.test(
    'revokeUserSessions: 200 {revoked:n}; every refresh token of the user is then 401; a success row',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const target = await createUser(app, tenant, { roles: ['user'] })
      const bystander = await createUser(app, tenant, { roles: ['user'] })
      const a = await plain(target)
      const aNext = await refresh(a.refreshToken)
      t.equal(aNext.status, 200)
      const b = await plain(target)
      const gone = await plain(target)
      t.same((await logout(gone)).data, { revoked: true })
      const theirs = await plain(bystander)

      const res = await call(app, 'revokeUserSessions', admin.cred, { params: { userId: target.id } })
      t.equal(res.status, 200)
      t.same(res.data, { revoked: 2 }, 'the logged-out session is not counted')

      for (const token of [aNext.data.refreshToken as string, b.refreshToken]) {
        const r = await refresh(token)
        t.equal(r.status, 401)
        t.equal(r.code, 'INVALID_REFRESH_TOKEN')
      }
      for (const s of [a, b]) {
        const row = await sessionRow(tenant.id, s.sid)
        t.ok(row.revoked_at, 'sessions.revoked_at is set')
        t.equal(row.revoked_reason, 'revoked_by_admin')
      }
      t.equal((await sessionRow(tenant.id, gone.sid)).revoked_reason, 'logout', 'left as it was')
      const tokens = await userTokenRows(tenant.id, target.id)
      t.equal(tokens.length, 4)
      t.ok(
        tokens.every((r) => r.revoked_at !== null),
        'every refresh token of the user is revoked',
      )
      t.same((await call(app, 'listUserSessions', admin.cred, { params: { userId: target.id } })).data, {
        items: [],
      })
      t.equal((await refresh(theirs.refreshToken)).status, 200, 'another user’s session is untouched')
      const me = await call(app, 'getMe', { token: b.accessToken })
      t.equal(me.status, 200, 'access tokens live until exp')

      const again = await call(app, 'revokeUserSessions', admin.cred, { params: { userId: target.id } })
      t.same(again.data, { revoked: 0 })
      t.match(await revokedRows(tenant.id), [
        {
          success: true,
          ...byUser(admin.id),
          user_id: target.id,
          error_message: null,
          metadata: { sessionsRevoked: 2 },
        },
        { success: true, actor_id: admin.id, user_id: target.id, metadata: { sessionsRevoked: 0 } },
      ])
    },
  )

  t.test(
    'revokeUserSessions: 200 with a Client Key holding users:update; the row names the key',
    async (t) => {
      const tenant = await createTenant(app)
      const key = await createKey(app, tenant, ['users:update'])
      const target = await createUser(app, tenant, { roles: ['user'] })
      const s = await plain(target)
      const res = await call(app, 'revokeUserSessions', { key: key.value }, { params: { userId: target.id } })
      t.equal(res.status, 200)
      t.same(res.data, { revoked: 1 })
      t.equal((await refresh(s.refreshToken)).code, 'INVALID_REFRESH_TOKEN')
      t.match(await revokedRows(tenant.id), [
        {
          success: true,
          ...byKey(key.id),
          user_id: target.id,
          metadata: { sessionsRevoked: 1 },
        },
      ])
    },
  )

  t.test(
    'revokeUserSessions: 403 ROLE_HIERARCHY_VIOLATION for an equal- or lower-ranked admin on an admin',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      await insertRole(app, tenant, 'deputy', 50, ['users:update', 'users:read'])
      const deputy = await userWithToken(app, tenant, { roles: ['deputy'] })
      const peer = await createUser(app, tenant, { roles: ['admin'] })
      const s = await plain(peer)
      for (const [who, cred] of [
        ['equal-ranked admin', admin.cred],
        ['lower-ranked admin', deputy.cred],
      ] as const) {
        const res = await call(app, 'revokeUserSessions', cred, { params: { userId: peer.id } })
        t.equal(res.status, 403, who)
        t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION', who)
      }
      t.equal((await sessionRow(tenant.id, s.sid)).revoked_at, null, 'the session is untouched')
      t.equal((await refresh(s.refreshToken)).status, 200, 'and still refreshes')
      t.match(await revokedRows(tenant.id), [
        {
          success: false,
          error_message: 'ROLE_HIERARCHY_VIOLATION',
          ...byUser(admin.id),
          user_id: peer.id,
        },
        {
          success: false,
          error_message: 'ROLE_HIERARCHY_VIOLATION',
          ...byUser(deputy.id),
          user_id: peer.id,
        },
      ])
      const lower = await createUser(app, tenant, { roles: ['user'] })
      await plain(lower)
      const ok = await call(app, 'revokeUserSessions', deputy.cred, { params: { userId: lower.id } })
      t.same(ok.data, { revoked: 1 }, 'the deputy may act on a user ranked below it')
    },
  )

  t.test(
    'revokeUserSessions: 403 ROLE_HIERARCHY_VIOLATION for a Client Key whose scopes do not cover the target',
    async (t) => {
      const tenant = await createTenant(app)
      const key = await createKey(app, tenant, ['users:update'])
      const target = await createUser(app, tenant, { roles: ['user'], permissions: ['roles:read'] })
      const s = await plain(target)
      const res = await call(app, 'revokeUserSessions', { key: key.value }, { params: { userId: target.id } })
      t.equal(res.status, 403)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      t.equal((await refresh(s.refreshToken)).status, 200, 'the session is untouched')
      t.match(await revokedRows(tenant.id), [
        {
          success: false,
          error_message: 'ROLE_HIERARCHY_VIOLATION',
          ...byKey(key.id),
          user_id: target.id,
        },
      ])
    },
  )

  t.test(
    'revokeUserSessions: 404 USER_NOT_FOUND for an unknown id and another tenant’s user; failure rows',
    async (t) => {
      const tenant = await createTenant(app)
      const otherTenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const stranger = await createUser(app, otherTenant, { roles: ['user'] })
      const s = await plain(stranger)
      for (const id of [UNKNOWN_ID, stranger.id]) {
        const res = await call(app, 'revokeUserSessions', admin.cred, { params: { userId: id } })
        t.equal(res.status, 404)
        t.equal(res.code, 'USER_NOT_FOUND')
      }
      t.equal((await sessionRow(otherTenant.id, s.sid)).revoked_at, null, 'another tenant’s session stays')
      t.equal((await refresh(s.refreshToken)).status, 200)
      const rows = await revokedRows(tenant.id)
      t.equal(rows.length, 2)
      for (const row of rows) {
        t.match(row, {
          success: false,
          error_message: 'USER_NOT_FOUND',
          ...byUser(admin.id),
          user_id: null,
        })
      }
      t.equal((await revokedRows(otherTenant.id)).length, 0, 'nothing written in the other tenant')
    },
  )

  t.test('revokeUserSessions: 403 FORBIDDEN without users:update, before the handler: no row', async (t) => {
    const tenant = await createTenant(app)
    const target = await createUser(app, tenant, { roles: ['user'] })
    const s = await plain(target)
    const key = await keyCred(app, tenant, ['users:read'])
    t.equal((await call(app, 'revokeUserSessions', key, { params: { userId: target.id } })).code, 'FORBIDDEN')
    const plainUser = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await call(app, 'revokeUserSessions', plainUser.cred, { params: { userId: target.id } })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    t.equal((await revokedRows(tenant.id)).length, 0)
    t.equal((await refresh(s.refreshToken)).status, 200)
  })

  t.test('revokeUserSessions: 400 VALIDATION_ERROR for a userId that is not a UUID', async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'revokeUserSessions', admin.cred, { params: { userId: '123' } })
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
  })
})
