import t from 'tap'
import { byKey, bySelf, byUser } from '../helpers/audit.js'
import { call } from '../helpers/call.js'
import {
  createKey,
  createTenant,
  createUser,
  insertRole,
  keyCred,
  platformTenant,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { ids, sessionsApp } from './support.js'

// The session operations' refusals (400, 403, 404: openapi/paths/account.yaml), for one's own sessions
// and another user's; what they change when they succeed is in sessions-mine.test.ts and
// sessions-users.test.ts.

const { app, plain, refresh, logout, sessionRow, revokedRows } = await sessionsApp(t)

t.test('revokeMySession: DELETE /me/sessions/:sessionId', async (t) => {
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

t.test('listUserSessions: GET /users/:userId/sessions', async (t) => {
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
