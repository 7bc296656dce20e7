import t from 'tap'
import { byKey, byUser } from '../helpers/audit.js'
import { call } from '../helpers/call.js'
import { createKey, createTenant, createUser, keyCred, userWithToken } from '../helpers/fixtures.js'
import { DAY_S, iso, sessionsApp } from './support.js'

// Another user's sessions, as an administrator or a Client Key sees them, when the call succeeds
// (listUserSessions, revokeUserSessions: openapi/paths/account.yaml); the refusals are in
// sessions-refused.test.ts.

const kit = await sessionsApp(t)
const { app, clock, open, plain, refresh, logout, sessionRow, userTokenRows, revokedRows } = kit

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
      const tokens = await userTokenRows(target)
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
})
