import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import {
  createKey,
  createTenant,
  deactivateTenant,
  platformKey,
  platformTenant,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, login } from '../helpers/call.js'

const code = () => `c-${randomUUID().slice(0, 8)}`

t.test('createTenant: POST /tenants', async (t) => {
  const app = await buildTestApp(t)

  await t.test('201 with built-in roles, merged auth_config and a first admin who can log in', async (t) => {
    const c = code()
    const res = await call(app, 'createTenant', platformKey, {
      body: {
        code: c,
        name: 'Acme',
        auth_config: {
          accessTokenExpiresIn: 600,
          passwordPolicy: { minLength: 10 },
          loginIdentifiers: ['email', 'username'],
        },
        admin: { email: 'Boss@Acme.test', username: 'boss', password: 'correct-horse-battery' },
      },
    })
    t.equal(res.status, 201)
    const d = res.body.data
    t.equal(d.code, c)
    t.equal(d.status, 'ACTIVE')
    t.same(d.database, { dedicated: false, host: null, database: null })
    t.equal(d.auth_config.accessTokenExpiresIn, 600)
    t.equal(d.auth_config.passwordPolicy.minLength, 10)
    t.equal(d.auth_config.passwordPolicy.rejectCommon, true, 'nested defaults kept')
    t.same(d.auth_config.loginIdentifiers, ['email', 'username'])
    t.type(d.adminUserId, 'string')
    const roles = await app.ctx.dbs.main
      .selectFrom('roles')
      .select('name')
      .where('tenant_id', '=', d.id)
      .execute()
    t.same(roles.map((r) => r.name).sort(), ['admin', 'user'])
    const ok = await login(app, c, 'boss', 'correct-horse-battery')
    t.equal(ok.status, 200)
    t.equal(ok.body.data.user.id, d.adminUserId)
    const me = await call(app, 'getMe', { token: ok.body.data.accessToken })
    t.same(me.body.data.roles, ['admin'])
    t.equal(me.body.data.email, 'boss@acme.test')
  })

  await t.test('201 without admin has no adminUserId; status INACTIVE is kept', async (t) => {
    const res = await call(app, 'createTenant', platformKey, {
      body: {
        code: code(),
        name: 'Quiet',
        status: 'INACTIVE',
      },
    })
    t.equal(res.status, 201)
    t.notOk('adminUserId' in res.body.data)
    t.equal(res.body.data.status, 'INACTIVE')
  })

  await t.test('201 with rateLimits from a platform principal', async (t) => {
    const res = await call(app, 'createTenant', platformKey, {
      body: {
        code: code(),
        name: 'Busy',
        auth_config: { rateLimits: { requestsPerMinute: 500 } },
      },
    })
    t.equal(res.status, 201)
    t.same(res.body.data.auth_config.rateLimits, { requestsPerMinute: 500, loginPerMinute: null })
  })

  await t.test('409 TENANT_ALREADY_EXISTS for a taken code', async (t) => {
    const c = code()
    t.equal((await call(app, 'createTenant', platformKey, { body: { code: c, name: 'One' } })).status, 201)
    const again = await call(app, 'createTenant', platformKey, {
      body: {
        code: c,
        name: 'Two',
        admin: { email: 'a@b.test', password: 'correct-horse-battery' },
      },
    })
    t.equal(again.status, 409)
    t.equal(again.body.code, 'TENANT_ALREADY_EXISTS')
  })

  await t.test(
    '400 PASSWORD_POLICY_VIOLATION with the failed rules, checked against the new policy',
    async (t) => {
      const c = code()
      const res = await call(app, 'createTenant', platformKey, {
        body: {
          code: c,
          name: 'Strict',
          auth_config: { passwordPolicy: { minLength: 16, requireDigit: true } },
          admin: { email: 'a@strict.test', password: 'short-password' },
        },
      })
      t.equal(res.status, 400)
      t.equal(res.body.code, 'PASSWORD_POLICY_VIOLATION')
      t.same(res.body.details, ['minLength', 'requireDigit'])
      t.equal(await app.ctx.tenants.byCode(c), null, 'nothing created')
    },
  )

  await t.test('400 VALIDATION_ERROR when the admin has no identifier of an enabled kind', async (t) => {
    const res = await call(app, 'createTenant', platformKey, {
      body: {
        code: code(),
        name: 'Emails only',
        admin: { username: 'boss', password: 'correct-horse-battery' },
      },
    })
    t.equal(res.status, 400)
    t.equal(res.body.code, 'VALIDATION_ERROR')
  })

  await t.test(
    '400 VALIDATION_ERROR for a bad code, an unknown property or an out-of-range config',
    async (t) => {
      for (const body of [
        { code: 'Bad_Code', name: 'x' },
        { code: code(), name: 'x', extra: true },
        { code: code(), name: 'x', auth_config: { accessTokenExpiresIn: 30 } },
      ]) {
        const res = await call(app, 'createTenant', platformKey, { body })
        t.equal(res.status, 400, JSON.stringify(body))
        t.equal(res.body.code, 'VALIDATION_ERROR')
      }
    },
  )

  await t.test('403 FORBIDDEN for a tenant admin (no tenants:create)', async (t) => {
    const tenant = await createTenant(app)
    const { cred: as } = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'createTenant', as, { body: { code: code(), name: 'x' } })
    t.equal(res.status, 403)
    t.equal(res.body.code, 'FORBIDDEN')
  })

  await t.test('403 FORBIDDEN for a non-platform principal holding tenants:create', async (t) => {
    const tenant = await createTenant(app)
    const key = await createKey(app, tenant, ['tenants:create'])
    const res = await call(app, 'createTenant', { key: key.value }, { body: { code: code(), name: 'x' } })
    t.equal(res.status, 403)
    t.equal(res.body.code, 'FORBIDDEN')
  })

  await t.test('401 UNAUTHORIZED without a credential', async (t) => {
    const res = await call(app, 'createTenant', {}, { body: { code: code(), name: 'x' } })
    t.equal(res.status, 401)
  })
})

t.test(
  'listTenants, searchTenants, getTenant, getMyTenant, getMyTenantConfig: GET /tenants, /tenants/search, /tenants/:id, /tenants/me',
  async (t) => {
    const app = await buildTestApp(t)
    const a = await createTenant(app)
    const b = await createTenant(app)
    await app.ctx.dbs.main
      .updateTable('tenants')
      .set({ name: 'Zebra 100% Corp' })
      .where('id', '=', b.id)
      .execute()
    const { cred: adminA } = await userWithToken(app, a, { roles: ['admin'] })

    await t.test('listTenants: a platform admin lists every tenant, newest first', async (t) => {
      const res = await call(app, 'listTenants', platformKey, { query: { limit: 100 } })
      t.equal(res.status, 200)
      const ids = res.body.data.items.map((x: { id: string }) => x.id)
      t.ok(ids.indexOf(b.id) < ids.indexOf(a.id), 'b (newer) before a')
      t.ok(res.body.data.total >= 3)
      t.equal(res.body.data.limit, 100)
      t.equal(res.body.data.offset, 0)
    })

    await t.test('listTenants: a platform user holding admin:* lists every tenant too', async (t) => {
      const { cred: as } = await userWithToken(app, await platformTenant(app), { roles: ['admin'] })
      const res = await call(app, 'listTenants', as)
      t.equal(res.status, 200)
      t.ok(res.body.data.total >= 3)
    })

    await t.test('listTenants: a tenant admin sees only its own tenant', async (t) => {
      const res = await call(app, 'listTenants', adminA)
      t.equal(res.status, 200)
      t.equal(res.body.data.total, 1)
      t.equal(res.body.data.items[0]?.id, a.id)
    })

    await t.test('listTenants: status filter, paging, and 400 for limit above 100', async (t) => {
      await deactivateTenant(app, a.id)
      const res = await call(app, 'listTenants', platformKey, { query: { status: 'INACTIVE' } })
      t.same(
        res.body.data.items.map((x: { id: string }) => x.id),
        [a.id],
      )
      await app.ctx.dbs.main.updateTable('tenants').set({ status: 'ACTIVE' }).where('id', '=', a.id).execute()
      app.ctx.tenants.invalidate(a.id)
      const page = await call(app, 'listTenants', platformKey, { query: { limit: 1, offset: 1 } })
      t.equal(page.body.data.items.length, 1)
      t.equal(page.body.data.items[0]?.id, a.id)
      const bad = await call(app, 'listTenants', platformKey, { query: { limit: 101 } })
      t.equal(bad.status, 400)
      t.equal(bad.body.code, 'VALIDATION_ERROR')
    })

    await t.test('searchTenants: matches code or name case-insensitively, wildcards literally', async (t) => {
      const byName = await call(app, 'searchTenants', platformKey, { query: { q: 'zEBRA' } })
      t.same(
        byName.body.data.items.map((x: { id: string }) => x.id),
        [b.id],
      )
      const byCode = await call(app, 'searchTenants', platformKey, {
        query: { q: a.code.slice(2).toUpperCase() },
      })
      t.same(
        byCode.body.data.items.map((x: { id: string }) => x.id),
        [a.id],
      )
      const percent = await call(app, 'searchTenants', platformKey, { query: { q: '100%' } })
      t.same(
        percent.body.data.items.map((x: { id: string }) => x.id),
        [b.id],
      )
      const underscore = await call(app, 'searchTenants', platformKey, { query: { q: '_' } })
      t.equal(underscore.body.data.total, 0, '_ is not a wildcard')
      const own = await call(app, 'searchTenants', adminA, { query: { q: 'zebra' } })
      t.equal(own.body.data.total, 0, 'a tenant admin never finds another tenant')
      const missing = await call(app, 'searchTenants', platformKey)
      t.equal(missing.status, 400)
    })

    await t.test('getTenant: own 200, another 404, unknown 404, bad id 400', async (t) => {
      const own = await call(app, 'getTenant', adminA, { params: { id: a.id } })
      t.equal(own.status, 200)
      t.equal(own.body.data.code, a.code)
      t.notOk('metadata' in own.body.data)
      const other = await call(app, 'getTenant', adminA, { params: { id: b.id } })
      t.equal(other.status, 404)
      t.equal(other.body.code, 'TENANT_NOT_FOUND')
      const byPlatform = await call(app, 'getTenant', platformKey, { params: { id: b.id } })
      t.equal(byPlatform.status, 200)
      const unknown = await call(app, 'getTenant', platformKey, { params: { id: randomUUID() } })
      t.equal(unknown.status, 404)
      const bad = await call(app, 'getTenant', platformKey, { params: { id: 'not-a-uuid' } })
      t.equal(bad.status, 400)
    })

    await t.test('getTenant: 403 without tenants:read', async (t) => {
      const { cred: as } = await userWithToken(app, a, { roles: ['user'] })
      const res = await call(app, 'getTenant', as, { params: { id: a.id } })
      t.equal(res.status, 403)
      t.equal(res.body.code, 'FORBIDDEN')
    })

    await t.test('getMyTenant, getMyTenantConfig: answer for any user of the tenant; JWT only', async (t) => {
      const { cred: as } = await userWithToken(app, a, { roles: ['user'] })
      const me = await call(app, 'getMyTenant', as)
      t.equal(me.status, 200)
      t.equal(me.body.data.id, a.id)
      const cfg = await call(app, 'getMyTenantConfig', as)
      t.equal(cfg.status, 200)
      t.equal(cfg.body.data.accessTokenExpiresIn, 900)
      t.same(cfg.body.data.loginIdentifiers, ['email'])
      const withKey = await call(app, 'getMyTenant', platformKey)
      t.equal(withKey.status, 401)
      t.equal(withKey.body.code, 'UNAUTHORIZED')
    })
  },
)
