import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { byUser } from '../helpers/audit.js'
import {
  auditRows,
  createTenant,
  createUser,
  keyCred,
  platformTenant,
  UNKNOWN_ID,
  userRow,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, loginAs, refresh, unchecked } from '../helpers/call.js'

const app = await buildTestApp(t)

t.test('listUsers: GET /users', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'], email: 'boss@acme.test' })
  const ana = await createUser(app, tenant, {
    email: 'Ana.Silva@acme.test',
    username: 'ana_s',
    roles: ['user'],
  })
  const bruno = await createUser(app, tenant, {
    email: 'bruno@acme.test',
    roles: ['user'],
    status: 'SUSPENDED',
  })
  const foreign = await createUser(app, other, { email: 'ana.other@acme.test' })

  t.test('200: the tenant’s users, newest first, with total and roles', async (t) => {
    const res = await call(app, 'listUsers', admin.cred)
    t.equal(res.status, 200)
    t.equal(res.data.total, 3)
    t.equal(res.data.limit, 20)
    t.equal(res.data.offset, 0)
    t.same(
      res.data.items.map((u) => u.email),
      ['bruno@acme.test', 'ana.silva@acme.test', 'boss@acme.test'],
    )
    t.same(res.data.items[2]?.roles, ['admin'])
    t.ok(res.data.items.every((u: { tenantId: string; tenantCode: string }) => u.tenantId === tenant.id))
    t.notOk(JSON.stringify(res.body).includes('password'))
  })

  t.test('200: pagination with limit and offset; total over all pages', async (t) => {
    const res = await call(app, 'listUsers', admin.cred, { query: { limit: 1, offset: 1 } })
    t.equal(res.status, 200)
    t.equal(res.data.items.length, 1)
    t.equal(res.data.items[0]?.email, 'ana.silva@acme.test')
    t.equal(res.data.total, 3)
  })

  t.test('200: filters status, q (case-insensitive substring) and role', async (t) => {
    const suspended = await call(app, 'listUsers', admin.cred, { query: { status: 'SUSPENDED' } })
    t.same(
      suspended.data.items.map((u) => u.email),
      ['bruno@acme.test'],
    )
    const q = await call(app, 'listUsers', admin.cred, { query: { q: 'ANA' } })
    t.same(
      q.data.items.map((u) => u.email),
      ['ana.silva@acme.test'],
      'never another tenant’s ana',
    )
    const byUsername = await call(app, 'listUsers', admin.cred, { query: { q: 'a_s' } })
    t.equal(byUsername.data.total, 1, 'q matches the username; `_` is literal')
    const percent = await call(app, 'listUsers', admin.cred, { query: { q: '%' } })
    t.equal(percent.data.total, 0, '`%` is literal')
    const role = await call(app, 'listUsers', admin.cred, { query: { role: 'admin' } })
    t.same(
      role.data.items.map((u) => u.email),
      ['boss@acme.test'],
    )
  })

  t.test(
    '200: ids names users (as the audit log does), never another tenant’s, in one request',
    async (t) => {
      const ids = [ana.id.toUpperCase(), bruno.id, foreign.id, UNKNOWN_ID, ana.id].join(',')
      const res = await call(app, 'listUsers', admin.cred, { query: { ids, limit: 100 } })
      t.equal(res.status, 200)
      t.same(
        res.data.items.map((u) => u.email),
        ['bruno@acme.test', 'ana.silva@acme.test'],
        'an id of another tenant or of no user is left out; case and repeats do not matter',
      )
      t.equal(res.data.total, 2)
      const withStatus = await call(app, 'listUsers', admin.cred, { query: { ids, status: 'ACTIVE' } })
      t.same(
        withStatus.data.items.map((u) => u.email),
        ['ana.silva@acme.test'],
        'with the other filters',
      )
      const hundred = Array.from({ length: 99 }, () => UNKNOWN_ID).concat(ana.id)
      const full = await call(app, 'listUsers', admin.cred, { query: { ids: hundred.join(',') } })
      t.equal(full.data.total, 1, '100 ids are taken')
    },
  )

  t.test('400 VALIDATION_ERROR for ids of more than 100, or not UUIDs', async (t) => {
    const many = Array.from({ length: 101 }, () => UNKNOWN_ID).join(',')
    for (const ids of [many, 'not-a-uuid', `${UNKNOWN_ID},`, `${UNKNOWN_ID} ,${UNKNOWN_ID}`, '']) {
      const res = await call(app, 'listUsers', admin.cred, { query: { ids } })
      t.equal(res.code, 'VALIDATION_ERROR', JSON.stringify(ids.slice(0, 40)))
    }
  })

  t.test('200 with a Client Key holding users:read', async (t) => {
    const res = await call(app, 'listUsers', await keyCred(app, tenant, ['users:read']))
    t.equal(res.status, 200)
    t.equal(res.data.total, 3)
  })

  t.test('400 VALIDATION_ERROR for limit above 100 or an unknown status', async (t) => {
    t.equal((await call(app, 'listUsers', admin.cred, { query: { limit: 101 } })).code, 'VALIDATION_ERROR')
    t.equal(
      (await call(app, 'listUsers', admin.cred, { query: { status: unchecked('GONE') } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('401 without a credential', async (t) => {
    t.equal((await call(app, 'listUsers', null)).status, 401)
  })

  t.test('403 FORBIDDEN without users:read', async (t) => {
    const plain = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await call(app, 'listUsers', plain.cred)
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
  })

  t.test('404 ROLE_NOT_FOUND for an unknown role name', async (t) => {
    const res = await call(app, 'listUsers', admin.cred, { query: { role: 'ghost' } })
    t.equal(res.status, 404)
    t.equal(res.code, 'ROLE_NOT_FOUND')
  })
})

t.test('getUser: GET /users/:userId', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const target = await createUser(app, tenant, { roles: ['user'], username: 'target' })
  const foreign = await createUser(app, other)

  t.test('200: the user object, never password material', async (t) => {
    const res = await call(app, 'getUser', admin.cred, { params: { userId: target.id } })
    t.equal(res.status, 200)
    t.match(res.data, {
      id: target.id,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      email: target.email,
      username: 'target',
      cpf_cnpj: null,
      status: 'ACTIVE',
      emailVerified: false,
      otpEnabled: false,
      roles: ['user'],
      lastLoginAt: null,
    })
    t.notOk(JSON.stringify(res.body).includes('password'))
  })

  t.test('400 VALIDATION_ERROR for an id that is not a UUID', async (t) => {
    t.equal(
      (await call(app, 'getUser', admin.cred, { params: { userId: 'not-a-uuid' } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without users:read', async (t) => {
    const key = await keyCred(app, tenant, ['roles:read'])
    t.equal((await call(app, 'getUser', key, { params: { userId: target.id } })).code, 'FORBIDDEN')
  })

  t.test('404 USER_NOT_FOUND for an unknown id and for another tenant’s user', async (t) => {
    t.equal(
      (await call(app, 'getUser', admin.cred, { params: { userId: UNKNOWN_ID } })).code,
      'USER_NOT_FOUND',
    )
    const res = await call(app, 'getUser', admin.cred, { params: { userId: foreign.id } })
    t.equal(res.status, 404)
    t.equal(res.code, 'USER_NOT_FOUND')
  })
})

t.test('updateUser: PATCH /users/:userId', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const foreign = await createUser(app, other)

  t.test('200: changes exactly the given fields', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const res = await call(app, 'updateUser', admin.cred, {
      params: { userId: u.id },
      body: {
        email: 'New.Mail@Acme.test',
        username: 'New.Name',
        emailVerified: true,
        otpEnabled: true,
      },
    })
    t.equal(res.status, 200)
    t.match(res.data, {
      id: u.id,
      email: 'new.mail@acme.test',
      username: 'New.Name',
      emailVerified: true,
      otpEnabled: true,
      status: 'ACTIVE',
      roles: ['user'],
    })
    const again = await call(app, 'getUser', admin.cred, { params: { userId: u.id } })
    t.equal(again.data.email, 'new.mail@acme.test')
  })

  t.test('400 VALIDATION_ERROR for password (or any unknown property), and nothing changes', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const before = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('users')
      .select(['password_hash', 'email', 'updated_at'])
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow()
    const res = await call(app, 'updateUser', admin.cred, {
      params: { userId: u.id },
      body: unchecked({
        email: 'changed@acme.test',
        password: 'Another-pass-99',
      }),
    })
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
    const after = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('users')
      .select(['password_hash', 'email', 'updated_at'])
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow()
    t.same(after, before)
    t.equal(
      (
        await call(app, 'updateUser', admin.cred, {
          params: { userId: u.id },
          body: unchecked({ tenantId: other.id }),
        })
      ).status,
      400,
    )
  })

  t.test(
    '400 VALIDATION_ERROR for an empty body, a bad status, an all-digit username, a bad email',
    async (t) => {
      const u = await createUser(app, tenant)
      for (const body of [
        {},
        { status: 'DELETED' },
        { username: '123456' },
        { email: 'nope' },
        { emailVerified: 'yes' },
      ]) {
        const res = await call(app, 'updateUser', admin.cred, {
          params: { userId: u.id },
          body: unchecked(body),
        })
        t.equal(res.code, 'VALIDATION_ERROR', JSON.stringify(body))
      }
    },
  )

  t.test('403 FORBIDDEN without users:update', async (t) => {
    const u = await createUser(app, tenant)
    const reader = await userWithToken(app, tenant, { permissions: ['users:read'] })
    t.equal(
      (await call(app, 'updateUser', reader.cred, { params: { userId: u.id }, body: { otpEnabled: true } }))
        .code,
      'FORBIDDEN',
    )
  })

  t.test(
    '404 USER_NOT_FOUND for an unknown id and another tenant’s user (which stays unchanged)',
    async (t) => {
      t.equal(
        (
          await call(app, 'updateUser', admin.cred, {
            params: { userId: UNKNOWN_ID },
            body: { otpEnabled: true },
          })
        ).code,
        'USER_NOT_FOUND',
      )
      const res = await call(app, 'updateUser', admin.cred, {
        params: { userId: foreign.id },
        body: { otpEnabled: true },
      })
      t.equal(res.status, 404)
      t.equal(res.code, 'USER_NOT_FOUND')
      const row = await userRow(app, other.id, foreign.id)
      t.equal(row.otp_enabled, false)
    },
  )

  t.test(
    '409 USER_ALREADY_EXISTS for a taken email (any case) or username; another tenant’s is free',
    async (t) => {
      await createUser(app, tenant, { email: 'taken@acme.test', username: 'taken' })
      const u = await createUser(app, tenant)
      const email = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: {
          email: 'TAKEN@acme.test',
        },
      })
      t.equal(email.status, 409)
      t.equal(email.code, 'USER_ALREADY_EXISTS')
      const username = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: { username: 'Taken' },
      })
      t.equal(username.code, 'USER_ALREADY_EXISTS')
      const own = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: { email: u.email },
      })
      t.equal(own.status, 200, 'keeping one’s own email is no conflict')
      const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })
      const free = await call(app, 'updateUser', otherAdmin.cred, {
        params: { userId: foreign.id },
        body: {
          email: 'taken@acme.test',
        },
      })
      t.equal(free.status, 200)
    },
  )

  t.test(
    'status other than ACTIVE revokes the user’s sessions: its refresh token stops working',
    async (t) => {
      const u = await createUser(app, tenant, { roles: ['user'] })
      const login = await loginAs(app, u)
      t.equal(login.status, 200)
      const res = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: { status: 'SUSPENDED' },
      })
      t.equal(res.status, 200)
      t.equal(res.data.status, 'SUSPENDED')
      const sessions = await app.ctx.dbs
        .forTenant(tenant.id)
        .selectFrom('sessions')
        .select(['revoked_at', 'revoked_reason'])
        .where('user_id', '=', u.id)
        .execute()
      t.equal(sessions.length, 1)
      t.ok(sessions[0]?.revoked_at)
      const refreshed = await refresh(app, login.data.refreshToken)
      t.equal(refreshed.code, 'INVALID_REFRESH_TOKEN')
      const back = await call(app, 'updateUser', admin.cred, {
        params: { userId: u.id },
        body: { status: 'ACTIVE' },
      })
      t.equal(back.data.status, 'ACTIVE')
    },
  )

  t.test('403 ROLE_HIERARCHY_VIOLATION on a peer; 200 on a user ranked below; 200 on oneself', async (t) => {
    const peer = await createUser(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'updateUser', admin.cred, {
      params: { userId: peer.id },
      body: { otpEnabled: true },
    })
    t.equal(res.status, 403)
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    const lower = await createUser(app, tenant, { roles: ['user'] })
    t.equal(
      (
        await call(app, 'updateUser', admin.cred, {
          params: { userId: lower.id },
          body: { otpEnabled: true },
        })
      ).status,
      200,
    )
    t.equal(
      (
        await call(app, 'updateUser', admin.cred, {
          params: { userId: admin.id },
          body: { otpEnabled: true },
        })
      ).status,
      200,
    )
    const noRole = await userWithToken(app, tenant, { permissions: ['users:update'] })
    const none = await createUser(app, tenant)
    t.equal(
      (
        await call(app, 'updateUser', noRole.cred, {
          params: { userId: none.id },
          body: { otpEnabled: true },
        })
      ).code,
      'ROLE_HIERARCHY_VIOLATION',
      'without any role the caller ranks with nobody above',
    )
  })

  t.test(
    'Client Key: 403 when the target holds a permission outside its scopes, 200 when within',
    async (t) => {
      const key = await keyCred(app, tenant, ['users:update', 'users:read'])
      const mighty = await createUser(app, tenant, { permissions: ['roles:read'] })
      const res = await call(app, 'updateUser', key, {
        params: { userId: mighty.id },
        body: { otpEnabled: true },
      })
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      const meek = await createUser(app, tenant, { roles: ['user'], permissions: ['users:read'] })
      t.equal(
        (await call(app, 'updateUser', key, { params: { userId: meek.id }, body: { otpEnabled: true } }))
          .status,
        200,
      )
    },
  )

  t.test('admin:* holders are exempt: a platform admin may PATCH a platform peer', async (t) => {
    const platform = await platformTenant(app)
    const root = await userWithToken(app, platform, { roles: ['admin'] })
    const peer = await createUser(app, platform, { roles: ['admin'] })
    const res = await call(app, 'updateUser', root.cred, {
      params: { userId: peer.id },
      body: { emailVerified: true },
    })
    t.equal(res.status, 200)
    t.equal(res.data.emailVerified, true)
  })
})

t.test('deleteUser: DELETE /users/:userId', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })

  t.test(
    '200 {id, deleted}: the user, its sessions, roles and grants go; a USER_DELETE success row',
    async (t) => {
      const u = await createUser(app, tenant, { roles: ['user'], permissions: ['users:read'] })
      const login = await loginAs(app, u)
      t.equal(login.status, 200)
      const res = await call(app, 'deleteUser', admin.cred, { params: { userId: u.id } })
      t.equal(res.status, 200)
      t.same(res.data, { id: u.id, deleted: true })
      const db = app.ctx.dbs.forTenant(tenant.id)
      t.equal((await db.selectFrom('users').select('id').where('id', '=', u.id).execute()).length, 0)
      t.equal((await db.selectFrom('sessions').select('id').where('user_id', '=', u.id).execute()).length, 0)
      t.equal(
        (await db.selectFrom('user_roles').select('user_id').where('user_id', '=', u.id).execute()).length,
        0,
      )
      t.equal(
        (await db.selectFrom('user_permissions').select('user_id').where('user_id', '=', u.id).execute())
          .length,
        0,
      )
      const refreshed = await refresh(app, login.data.refreshToken)
      t.equal(refreshed.code, 'INVALID_REFRESH_TOKEN')
      const rows = (await auditRows(app, tenant.id, 'USER_DELETE')).filter((r) => r.user_id === u.id)
      t.equal(rows.length, 1)
      t.match(rows[0], { success: true, ...byUser(admin.id), error_message: null })
      t.equal((await call(app, 'getUser', admin.cred, { params: { userId: u.id } })).code, 'USER_NOT_FOUND')
    },
  )

  t.test('400 VALIDATION_ERROR for an id that is not a UUID', async (t) => {
    t.equal(
      (await call(app, 'deleteUser', admin.cred, { params: { userId: '123' } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without users:delete (refused before the handler: no audit row)', async (t) => {
    const u = await createUser(app, tenant)
    const key = await keyCred(app, tenant, ['users:read'])
    const res = await call(app, 'deleteUser', key, { params: { userId: u.id } })
    t.equal(res.code, 'FORBIDDEN')
    t.equal((await auditRows(app, tenant.id, 'USER_DELETE')).filter((r) => r.user_id === u.id).length, 0)
  })

  t.test('404 USER_NOT_FOUND for unknown and cross-tenant ids, each with a failure row', async (t) => {
    const foreign = await createUser(app, other)
    const before = (await auditRows(app, tenant.id, 'USER_DELETE')).length
    t.equal(
      (await call(app, 'deleteUser', admin.cred, { params: { userId: UNKNOWN_ID } })).code,
      'USER_NOT_FOUND',
    )
    const res = await call(app, 'deleteUser', admin.cred, { params: { userId: foreign.id } })
    t.equal(res.status, 404)
    t.equal(res.code, 'USER_NOT_FOUND')
    const rows = (await auditRows(app, tenant.id, 'USER_DELETE')).slice(before)
    t.equal(rows.length, 2)
    t.ok(rows.every((r) => r.success === false && r.error_message === 'USER_NOT_FOUND' && r.user_id === null))
    const still = await app.ctx.dbs
      .forTenant(other.id)
      .selectFrom('users')
      .select('id')
      .where('id', '=', foreign.id)
      .execute()
    t.equal(still.length, 1, 'another tenant’s user survives')
    t.equal((await auditRows(app, other.id, 'USER_DELETE')).length, 0, 'nothing written in the other tenant')
  })

  t.test('403 ROLE_HIERARCHY_VIOLATION deleting a peer, with a failure row naming the target', async (t) => {
    const peer = await createUser(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'deleteUser', admin.cred, { params: { userId: peer.id } })
    t.equal(res.status, 403)
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    const rows = (await auditRows(app, tenant.id, 'USER_DELETE')).filter((r) => r.user_id === peer.id)
    t.equal(rows.length, 1)
    t.match(rows[0], { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION', actor_id: admin.id })
  })

  t.test('Client Key: 403 for a target beyond its scopes, 200 within them', async (t) => {
    const key = await keyCred(app, tenant, ['users:delete', 'users:read'])
    const beyond = await createUser(app, tenant, { roles: ['admin'] })
    t.equal(
      (await call(app, 'deleteUser', key, { params: { userId: beyond.id } })).code,
      'ROLE_HIERARCHY_VIOLATION',
    )
    const within = await createUser(app, tenant, { roles: ['user'] })
    const res = await call(app, 'deleteUser', key, { params: { userId: within.id } })
    t.equal(res.status, 200)
    const rows = (await auditRows(app, tenant.id, 'USER_DELETE')).filter((r) => r.user_id === within.id)
    t.match(rows, [{ success: true, actor_type: 'client_key' }])
  })
})
