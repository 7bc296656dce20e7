import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { activeSessions, createTenant, createUser, userWithToken } from '../helpers/fixtures.js'
import type { PasswordHasher } from '../../src/lib/hashing.js'
import { call, loginAs, loginTokens, refresh } from '../helpers/call.js'
import { refreshTokenRows } from '../helpers/sessions.js'

// updateUser (openapi/paths/users.yaml): a user set to any status but ACTIVE has every
// session revoked in the same transaction; reactivating it revives none of them.

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const admin = await userWithToken(app, tenant, { roles: ['admin'] })

t.test('updateUser: a status but ACTIVE ends every session (PATCH /users/:userId)', async (t) => {
  for (const status of ['INACTIVE', 'SUSPENDED'] as const) {
    t.test(`200 ${status}: sessions and tokens revoked; ACTIVE again revives none (401)`, async (t) => {
      const u = await createUser(app, tenant, { roles: ['user'] })
      const first = await loginTokens(app, u)
      const second = await loginTokens(app, u)
      const rotated = await refresh(app, second.refreshToken)
      t.equal(rotated.status, 200)

      const off = await call(app, 'updateUser', admin.cred, { params: { userId: u.id }, body: { status } })
      t.equal(off.status, 200)
      t.same(await activeSessions(app, u), [], 'no active session row')
      const live = (await refreshTokenRows(app, u)).filter((r) => r.revoked_at === null)
      t.same(live, [], 'no live refresh token')

      const on = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: { status: 'ACTIVE' },
      })
      t.equal(on.status, 200)
      for (const refreshToken of [first.refreshToken, rotated.data.refreshToken]) {
        const res = await refresh(app, refreshToken)
        t.equal(res.status, 401, 'an old refresh token stays dead')
        t.equal(res.code, 'INVALID_REFRESH_TOKEN')
      }
      t.equal((await loginAs(app, u)).status, 200, 'a new login works')
    })
  }

  t.test('403 USER_INACTIVE for a login whose password check overlapped the deactivation', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const hasher = app.ctx.hasher as { verify: PasswordHasher['verify'] }
    const verify = hasher.verify
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let entered!: () => void
    const checking = new Promise<void>((resolve) => (entered = resolve))
    // Why: holds the login between its status check and opening the session, where the race lies.
    hasher.verify = async (password, hash) => {
      const result = await verify(password, hash)
      entered()
      await held
      return result
    }
    t.teardown(() => {
      hasher.verify = verify
    })
    const pending = loginAs(app, u)
    await checking
    hasher.verify = verify
    const off = await call(app, 'updateUser', admin.cred, {
      params: { userId: u.id },
      body: { status: 'SUSPENDED' },
    })
    t.equal(off.status, 200)
    release()
    const res = await pending
    t.equal(res.status, 403)
    t.equal(res.code, 'USER_INACTIVE')
    t.same(await activeSessions(app, u), [], 'no session was opened')
    const on = await call(app, 'updateUser', admin.cred, {
      params: { userId: u.id },
      body: { status: 'ACTIVE' },
    })
    t.equal(on.status, 200)
    t.same(await activeSessions(app, u), [], 'and none appears on reactivation')
  })

  t.test('200 for other changes (emailVerified, status ACTIVE): nothing is revoked', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const pair = await loginTokens(app, u)
    const res = await call(app, 'updateUser', admin.cred, {
      params: { userId: u.id },
      body: {
        emailVerified: true,
        status: 'ACTIVE',
      },
    })
    t.equal(res.status, 200)
    t.equal((await refresh(app, pair.refreshToken)).status, 200)
  })
})
