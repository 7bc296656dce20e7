import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import {
  createKey,
  createTenant,
  createUser,
  platformKey,
  platformTenant,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, login, refresh, unchecked } from '../helpers/call.js'

t.test('updateTenant: PATCH /tenants/:id', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const { cred: admin } = await userWithToken(app, tenant, { roles: ['admin'] })

  await t.test('200 renames; code stays; updatedAt moves', async (t) => {
    const before = await call(app, 'getTenant', admin, { params: { id: tenant.id } })
    const res = await call(app, 'updateTenant', admin, {
      params: { id: tenant.id },
      body: { name: 'Renamed' },
    })
    t.equal(res.status, 200)
    t.equal(res.body.data.name, 'Renamed')
    t.equal(res.body.data.code, tenant.code)
    t.ok(res.body.data.updatedAt >= before.body.data.updatedAt)
  })

  await t.test('400 for code or an empty body', async (t) => {
    for (const body of [{ code: 'other-code' }, {}]) {
      const res = await call(app, 'updateTenant', admin, { params: { id: tenant.id }, body: unchecked(body) })
      t.equal(res.status, 400)
      t.equal(res.body.code, 'VALIDATION_ERROR')
    }
  })

  await t.test('404 for another tenant from a tenant admin', async (t) => {
    const res = await call(app, 'updateTenant', admin, { params: { id: other.id }, body: { name: 'x' } })
    t.equal(res.status, 404)
    t.equal(res.body.code, 'TENANT_NOT_FOUND')
  })

  await t.test('409 SYSTEM_RESOURCE_PROTECTED: the platform tenant cannot be deactivated', async (t) => {
    const p = await platformTenant(app)
    const res = await call(app, 'updateTenant', platformKey, {
      params: { id: p.id },
      body: { status: 'INACTIVE' },
    })
    t.equal(res.status, 409)
    t.equal(res.body.code, 'SYSTEM_RESOURCE_PROTECTED')
  })

  await t.test(
    'INACTIVE stops logins, refreshes, tokens and keys at once; ACTIVE restores them',
    async (t) => {
      const user = await createUser(app, other)
      const key = await createKey(app, other, ['tenants:read'])
      const first = await login(app, other.code, user.email)
      t.equal(first.status, 200)
      const { accessToken, refreshToken } = first.body.data
      t.equal(
        (await call(app, 'getTenantMetrics', { key: key.value })).status,
        200,
        'key works (and is cached)',
      )
      t.equal((await call(app, 'getMe', { token: accessToken })).status, 200, 'token works (remembered)')

      const off = await call(app, 'updateTenant', platformKey, {
        params: { id: other.id },
        body: { status: 'INACTIVE' },
      })
      t.equal(off.status, 200)
      t.equal(off.body.data.status, 'INACTIVE')
      const denied = await login(app, other.code, user.email)
      t.equal(denied.status, 404)
      t.equal(denied.body.code, 'TENANT_NOT_FOUND')
      const refreshed = await refresh(app, refreshToken)
      t.equal(refreshed.status, 401)
      t.equal(refreshed.body.code, 'INVALID_REFRESH_TOKEN')
      t.equal((await call(app, 'getMe', { token: accessToken })).status, 401)
      t.equal((await call(app, 'getTenantMetrics', { key: key.value })).status, 401)

      const on = await call(app, 'updateTenant', platformKey, {
        params: { id: other.id },
        body: { status: 'ACTIVE' },
      })
      t.equal(on.status, 200)
      t.equal((await login(app, other.code, user.email)).status, 200)
      t.equal((await call(app, 'getMe', { token: accessToken })).status, 200)
    },
  )
})

t.test('updateTenantConfig: PATCH /tenants/:id/config', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { passwordPolicy: { requireDigit: true } })
  const other = await createTenant(app)
  const { cred: admin } = await userWithToken(app, tenant, { roles: ['admin'] })

  await t.test('200 merges key by key (nested too), arrays replaced', async (t) => {
    const res = await call(app, 'updateTenantConfig', admin, {
      params: { id: tenant.id },
      body: {
        passwordPolicy: { minLength: 12 },
        loginIdentifiers: ['username'],
        maxConcurrentSessions: 3,
      },
    })
    t.equal(res.status, 200)
    t.equal(res.body.data.passwordPolicy.minLength, 12)
    t.equal(res.body.data.passwordPolicy.requireDigit, true, 'kept from before')
    t.same(res.body.data.loginIdentifiers, ['username'])
    t.equal(res.body.data.maxConcurrentSessions, 3)
    t.equal(res.body.data.accessTokenExpiresIn, 900)
    const me = await call(app, 'getMyTenantConfig', admin)
    t.same(me.body.data, res.body.data, 'GET /tenants/me/config answers the same object')
    t.equal((await app.ctx.tenants.byId(tenant.id))?.authConfig.maxConcurrentSessions, 3, 'cache dropped')
  })

  await t.test('400 for out-of-range values, unknown keys, an empty identifier list', async (t) => {
    for (const body of [
      { accessTokenExpiresIn: 86401 },
      { refreshReuseGraceSeconds: 61 },
      { maxConcurrentSessions: 0 },
      { passwordPolicy: { minLength: 7 } },
      { loginIdentifiers: [] },
      { loginIdentifiers: ['phone'] },
      { somethingElse: 1 },
    ]) {
      const res = await call(app, 'updateTenantConfig', admin, {
        params: { id: tenant.id },
        body: unchecked(body),
      })
      t.equal(res.status, 400, JSON.stringify(body))
      t.equal(res.body.code, 'VALIDATION_ERROR')
    }
  })

  await t.test('403 FORBIDDEN for rateLimits from a tenant admin; 200 from the platform', async (t) => {
    const denied = await call(app, 'updateTenantConfig', admin, {
      params: { id: tenant.id },
      body: {
        rateLimits: { loginPerMinute: 50 },
      },
    })
    t.equal(denied.status, 403)
    t.equal(denied.body.code, 'FORBIDDEN')
    const ok = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: {
        rateLimits: { loginPerMinute: 50 },
      },
    })
    t.equal(ok.status, 200)
    t.same(ok.body.data.rateLimits, { requestsPerMinute: null, loginPerMinute: 50 })
    t.equal(ok.body.data.passwordPolicy.minLength, 12, 'earlier changes kept')
  })

  await t.test('404 for another tenant from a tenant admin', async (t) => {
    const res = await call(app, 'updateTenantConfig', admin, {
      params: { id: other.id },
      body: {
        maxConcurrentSessions: 2,
      },
    })
    t.equal(res.status, 404)
    t.equal(res.body.code, 'TENANT_NOT_FOUND')
  })
})

t.test('deleteTenant: DELETE /tenants/:id', async (t) => {
  const app = await buildTestApp(t)

  await t.test('200 removes users, roles, permissions, sessions and keys; audit rows stay', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const key = await createKey(app, tenant, ['tenants:read'])
    t.equal((await login(app, tenant.code, user.email)).status, 200)
    t.equal((await login(app, tenant.code, user.email, 'wrong-password-1')).status, 401)
    const db = app.ctx.dbs.main
    await db
      .insertInto('permissions')
      .values({ tenant_id: tenant.id, name: 'reports:read', resource: 'reports', action: 'read' })
      .execute()
    t.equal((await call(app, 'getTenantMetrics', { key: key.value })).status, 200)

    const res = await call(app, 'deleteTenant', platformKey, { params: { id: tenant.id } })
    t.equal(res.status, 200)
    t.same(res.body.data, { id: tenant.id, deleted: true })
    for (const table of [
      'users',
      'roles',
      'permissions',
      'sessions',
      'refresh_tokens',
      'client_keys',
    ] as const) {
      const rows = await db.selectFrom(table).select('tenant_id').where('tenant_id', '=', tenant.id).execute()
      t.equal(rows.length, 0, `${table} emptied`)
    }
    const audit = await db
      .selectFrom('tessera_audit.audit_log')
      .select('action')
      .where('tenant_id', '=', tenant.id)
      .execute()
    t.equal(audit.length, 2, 'both LOGIN rows kept')
    t.equal((await call(app, 'getTenant', platformKey, { params: { id: tenant.id } })).status, 404)
    t.equal((await login(app, tenant.code, user.email)).body.code, 'TENANT_NOT_FOUND')
    t.equal((await call(app, 'getTenantMetrics', { key: key.value })).status, 401, 'its key no longer works')
  })

  await t.test('a new tenant may take the deleted code at once', async (t) => {
    const tenant = await createTenant(app)
    t.equal((await call(app, 'deleteTenant', platformKey, { params: { id: tenant.id } })).status, 200)
    const again = await call(app, 'createTenant', platformKey, {
      body: {
        code: tenant.code,
        name: 'Again',
        admin: { email: 'again@x.test', password: 'correct-horse-battery' },
      },
    })
    t.equal(again.status, 201)
    t.equal((await login(app, tenant.code, 'again@x.test', 'correct-horse-battery')).status, 200)
  })

  await t.test('409 SYSTEM_RESOURCE_PROTECTED for the platform tenant', async (t) => {
    const p = await platformTenant(app)
    const res = await call(app, 'deleteTenant', platformKey, { params: { id: p.id } })
    t.equal(res.status, 409)
    t.equal(res.body.code, 'SYSTEM_RESOURCE_PROTECTED')
  })

  await t.test('404 for an unknown id; 403 for a tenant admin (no tenants:delete)', async (t) => {
    t.equal((await call(app, 'deleteTenant', platformKey, { params: { id: randomUUID() } })).status, 404)
    const tenant = await createTenant(app)
    const { cred: as } = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'deleteTenant', as, { params: { id: tenant.id } })
    t.equal(res.status, 403)
    t.equal(res.body.code, 'FORBIDDEN')
  })

  await t.test('deleteTenant: 403 for a non-platform key whose scopes claim tenants:delete', async (t) => {
    // Platform powers come only from the platform tenant: the scope counts for nothing elsewhere.
    const a = await createTenant(app)
    const b = await createTenant(app)
    const key = await createKey(app, a, ['tenants:delete'])
    for (const id of [a.id, b.id]) {
      const res = await call(app, 'deleteTenant', { key: key.value }, { params: { id } })
      t.equal(res.status, 403)
      t.equal(res.body.code, 'FORBIDDEN')
    }
  })
})
