import t from 'tap'
import { sql } from 'kysely'
import { bySelf, matchOne } from '../helpers/audit.js'
import { call } from '../helpers/call.js'
import { defaultBackend } from '../helpers/db.js'
import { createTenant, createUser, freshIp, sidOf, userWithToken, waitFor } from '../helpers/fixtures.js'
import { DAY_S, ids, iso, sessionsApp } from './support.js'

// A user's own sessions when the call succeeds (listMySessions, revokeMySession,
// revokeMyOtherSessions: openapi/paths/account.yaml); the refusals are in sessions-refused.test.ts.

const kit = await sessionsApp(t)
const { app, clock, open, plain, refresh, logout, mySessions, sessionRow, userTokenRows } = kit
const { revokedRows } = kit

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
      const tokens = (await userTokenRows(user)).filter((r) => r.session_id === victim.sid)
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
      const live = (await userTokenRows(user)).filter((r) => r.revoked_at === null)
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
