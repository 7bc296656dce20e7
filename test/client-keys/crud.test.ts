import t from 'tap'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { createKey, createTenant, createUser, KEY_SHAPE, tokenFor, UNKNOWN_ID } from '../helpers/fixtures.js'
import { call, newClientKey, unchecked } from '../helpers/call.js'

// One app for the whole file: building one costs seconds; every test makes its own tenants.
const app = await buildTestApp(t)

async function tenantWithAdmin() {
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  return { tenant, admin, jwt: await tokenFor(app, admin) }
}

t.test('createClientKey: POST /client-keys', async (t) => {
  const { tenant, jwt } = await tenantWithAdmin()

  t.test('201 with the value, its prefix and the key object', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { token: jwt },
      {
        body: {
          name: 'signup-backend',
          scopes: ['users:create', 'users:read'],
          ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'],
          originAllowlist: ['https://app.example.org'],
          expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        },
      },
    )
    t.equal(r.status, 201)
    const k = r.body.data
    t.match(k.key, KEY_SHAPE)
    t.equal(k.prefix, k.key.slice(0, 12))
    t.equal(k.tenantId, tenant.id)
    t.equal(k.name, 'signup-backend')
    t.same(k.scopes, ['users:create', 'users:read'])
    t.same(k.ipAllowlist, ['203.0.113.0/24', '2001:db8::/32'])
    t.same(k.originAllowlist, ['https://app.example.org'])
    t.equal(k.status, 'ACTIVE')
    t.equal(k.lastUsedAt, null)
    t.equal(k.revokedAt, null)
    const row = await app.ctx.dbs.main
      .selectFrom('client_keys')
      .selectAll()
      .where('id', '=', k.id)
      .executeTakeFirstOrThrow()
    t.notMatch(JSON.stringify(row), k.key.slice(3), 'only a hash of the value is stored')
    t.equal(row.created_by_type, 'user')
  })

  t.test('origins are stored in their serialized form', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { token: jwt },
      { body: { name: 'o', scopes: ['users:read'], originAllowlist: ['HTTPS://App.Example.org:443/'] } },
    )
    t.equal(r.status, 201)
    t.same(r.body.data.originAllowlist, ['https://app.example.org'])
  })

  t.test('400 VALIDATION_ERROR', async (t) => {
    const bad: [string, object][] = [
      ['expiresAt in the past', { expiresAt: new Date(Date.now() - 1000).toISOString() }],
      ['a CIDR that is not one', { ipAllowlist: ['10.0.0.0/33'] }],
      ['an origin with a path', { originAllowlist: ['https://app.example.org/login'] }],
      ['an unknown property', { key: 'ck_' + 'a'.repeat(43) }],
      ['no scopes', { scopes: [] }],
      ['a malformed scope', { scopes: ['Users:Read'] }],
    ]
    for (const [why, extra] of bad) {
      const r = await call(
        app,
        'createClientKey',
        { token: jwt },
        { body: { name: 'x', scopes: ['users:read'], ...extra } },
      )
      t.equal(r.status, 400, why)
      t.equal(r.body.code, 'VALIDATION_ERROR', why)
    }
    const past = await call(
      app,
      'createClientKey',
      { token: jwt },
      { body: { name: 'x', scopes: ['users:read'], expiresAt: '2000-01-01T00:00:00Z' } },
    )
    t.same(past.body.details, [{ path: 'body.expiresAt', message: 'must be in the future' }])
  })

  t.test('401 UNAUTHORIZED without a credential', async (t) => {
    const r = await call(app, 'createClientKey', {}, { body: { name: 'x', scopes: ['users:read'] } })
    t.equal(r.status, 401)
    t.equal(r.body.code, 'UNAUTHORIZED')
  })

  t.test('403 FORBIDDEN without client-keys:create', async (t) => {
    const user = await createUser(app, tenant, { permissions: ['users:read'] })
    const r = await call(
      app,
      'createClientKey',
      { token: await tokenFor(app, user) },
      { body: { name: 'x', scopes: ['users:read'] } },
    )
    t.equal(r.status, 403)
    t.equal(r.body.code, 'FORBIDDEN')
  })
})

t.test('createClientKey: POST /client-keys with tenantId', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()

  t.test('201: the platform key creates a key inside another tenant, which acts there', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { key: PLATFORM_KEY },
      { body: { name: 'for-b', scopes: ['client-keys:read'], tenantId: b.tenant.id } },
    )
    t.equal(r.status, 201)
    t.equal(r.body.data.tenantId, b.tenant.id)
    const own = await call(app, 'listTenantClientKeys', { key: r.body.data.key })
    t.equal(own.status, 200)
    t.ok(own.body.data.items.every((k: { tenantId: string }) => k.tenantId === b.tenant.id))
    t.ok(own.body.data.items.some((k: { id: string }) => k.id === r.body.data.id))
  })

  t.test('201 when a tenant admin names its own tenant', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { token: a.jwt },
      { body: { name: 'own', scopes: ['users:read'], tenantId: a.tenant.id } },
    )
    t.equal(r.status, 201)
  })

  t.test('404 TENANT_NOT_FOUND when a tenant admin names another tenant', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { token: a.jwt },
      { body: { name: 'x', scopes: ['users:read'], tenantId: b.tenant.id } },
    )
    t.equal(r.status, 404)
    t.equal(r.body.code, 'TENANT_NOT_FOUND')
  })

  t.test('404 TENANT_NOT_FOUND for an unknown tenant, even for the platform', async (t) => {
    const r = await call(
      app,
      'createClientKey',
      { key: PLATFORM_KEY },
      { body: { name: 'x', scopes: ['users:read'], tenantId: '00000000-0000-4000-8000-000000000000' } },
    )
    t.equal(r.status, 404)
    t.equal(r.body.code, 'TENANT_NOT_FOUND')
  })
})

t.test('getClientKey: GET /client-keys/:id', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const created = await newClientKey(app, { token: a.jwt }, { name: 'k', scopes: ['users:read'] })

  t.test('200 without the value', async (t) => {
    const r = await call(app, 'getClientKey', { token: a.jwt }, { params: { id: created.id } })
    t.equal(r.status, 200)
    const { key, ...rest } = created
    t.same(r.body.data, rest)
    t.notOk('key' in r.body.data)
    t.notMatch(r.raw, key)
  })

  t.test("404 CLIENT_KEY_NOT_FOUND for another tenant's key and an unknown id", async (t) => {
    for (const id of [created.id, '00000000-0000-4000-8000-000000000000']) {
      const r = await call(app, 'getClientKey', { token: b.jwt }, { params: { id } })
      t.equal(r.status, 404)
      t.equal(r.body.code, 'CLIENT_KEY_NOT_FOUND')
    }
    const platform = await call(app, 'getClientKey', { key: PLATFORM_KEY }, { params: { id: created.id } })
    t.equal(
      platform.body.code,
      'CLIENT_KEY_NOT_FOUND',
      'every endpoint but the listing acts on the own tenant',
    )
  })

  t.test('400 VALIDATION_ERROR for an id that is not a UUID', async (t) => {
    const r = await call(app, 'getClientKey', { token: a.jwt }, { params: { id: 'nope' } })
    t.equal(r.status, 400)
    t.equal(r.body.code, 'VALIDATION_ERROR')
  })
})

t.test('listTenantClientKeys: GET /client-keys/tenant', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const ids: string[] = []
  for (const name of ['one', 'two', 'three']) {
    ids.push((await newClientKey(app, { token: a.jwt }, { name, scopes: ['users:read'] })).id)
  }
  await createKey(app, b.tenant, ['users:read'])
  await call(app, 'revokeClientKey', { token: a.jwt }, { params: { id: ids[0]! } })

  t.test("200: the caller's tenant only, newest first, paged", async (t) => {
    const r = await call(app, 'listTenantClientKeys', { token: a.jwt })
    t.equal(r.status, 200)
    t.same(
      r.body.data.items.map((k: { id: string }) => k.id),
      [...ids].reverse(),
    )
    t.equal(r.body.data.total, 3)
    t.equal(r.body.data.limit, 20)
    t.equal(r.body.data.offset, 0)
    const p = await call(app, 'listTenantClientKeys', { token: a.jwt }, { query: { limit: 1, offset: 1 } })
    t.same(
      p.body.data.items.map((k: { id: string }) => k.id),
      [ids[1]],
    )
    t.equal(p.body.data.total, 3)
  })

  t.test('200 with a status filter', async (t) => {
    const revoked = await call(
      app,
      'listTenantClientKeys',
      { token: a.jwt },
      { query: { status: 'REVOKED' } },
    )
    t.same(
      revoked.body.data.items.map((k: { id: string }) => k.id),
      [ids[0]],
    )
    const active = await call(app, 'listTenantClientKeys', { token: a.jwt }, { query: { status: 'ACTIVE' } })
    t.equal(active.body.data.total, 2)
  })

  t.test('200 for any credential of the tenant, even without client-keys:read', async (t) => {
    const user = await createUser(app, a.tenant)
    const r = await call(app, 'listTenantClientKeys', { token: await tokenFor(app, user) })
    t.equal(r.status, 200)
    t.equal(r.body.data.total, 3)
  })

  t.test('400 VALIDATION_ERROR for limit above 100', async (t) => {
    const r = await call(app, 'listTenantClientKeys', { token: a.jwt }, { query: { limit: 101 } })
    t.equal(r.status, 400)
    t.equal(r.body.code, 'VALIDATION_ERROR')
  })
})

t.test('listTenantClientKeys: ids, the keys a page of the audit log names, in one request', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const one = await newClientKey(app, { token: a.jwt }, { name: 'one', scopes: ['users:read'] })
  const two = await newClientKey(app, { token: a.jwt }, { name: 'two', scopes: ['users:read'] })
  await newClientKey(app, { token: a.jwt }, { name: 'three', scopes: ['users:read'] })
  const foreign = await createKey(app, b.tenant, ['users:read'])
  await call(app, 'revokeClientKey', { token: a.jwt }, { params: { id: two.id } })

  t.test('200: only those keys of the caller’s tenant; case and repeats do not matter', async (t) => {
    const ids = [one.id.toUpperCase(), two.id, foreign.id, UNKNOWN_ID, one.id].join(',')
    const r = await call(app, 'listTenantClientKeys', { token: a.jwt }, { query: { ids, limit: 100 } })
    t.equal(r.status, 200)
    t.same(
      r.data.items.map((k) => k.name),
      ['two', 'one'],
      'another tenant’s key and an unknown id are left out; a revoked key is still named',
    )
    t.equal(r.data.total, 2)
    const active = await call(
      app,
      'listTenantClientKeys',
      { token: a.jwt },
      { query: { ids, status: 'ACTIVE' } },
    )
    t.same(
      active.data.items.map((k) => k.name),
      ['one'],
      'with the status filter',
    )
    const hundred = Array.from({ length: 99 }, () => UNKNOWN_ID).concat(one.id)
    const full = await call(
      app,
      'listTenantClientKeys',
      { token: a.jwt },
      { query: { ids: hundred.join(',') } },
    )
    t.equal(full.data.total, 1, '100 ids are taken')
  })

  t.test('400 VALIDATION_ERROR for ids of more than 100, or not UUIDs', async (t) => {
    const many = Array.from({ length: 101 }, () => UNKNOWN_ID).join(',')
    for (const ids of [many, 'not-a-uuid', `${UNKNOWN_ID},`, `${UNKNOWN_ID} ,${UNKNOWN_ID}`, '']) {
      const r = await call(app, 'listTenantClientKeys', { token: a.jwt }, { query: { ids } })
      t.equal(r.code, 'VALIDATION_ERROR', JSON.stringify(ids.slice(0, 40)))
    }
  })
})

t.test('listClientKeys: GET /client-keys (every tenant)', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const ka = await createKey(app, a.tenant, ['users:read'])
  const kb = await createKey(app, b.tenant, ['users:read'])

  t.test('200 for admin:*: keys of every tenant, platform ones included', async (t) => {
    const r = await call(app, 'listClientKeys', { key: PLATFORM_KEY }, { query: { limit: 100 } })
    t.equal(r.status, 200)
    const ids = r.body.data.items.map((k: { id: string }) => k.id)
    t.ok(ids.includes(ka.id) && ids.includes(kb.id))
    const platform = await app.ctx.tenants.byCode('platform')
    t.ok(
      r.body.data.items.some((k: { tenantId: string }) => k.tenantId === platform?.id),
      'the platform tenant’s bootstrap key is listed',
    )
    t.notMatch(r.raw, ka.value)
  })

  t.test('200 filtered by tenantId', async (t) => {
    const r = await call(app, 'listClientKeys', { key: PLATFORM_KEY }, { query: { tenantId: b.tenant.id } })
    t.same(
      r.body.data.items.map((k: { id: string }) => k.id),
      [kb.id],
    )
    t.equal(r.body.data.total, 1)
  })

  t.test('404 TENANT_NOT_FOUND for an unknown tenantId', async (t) => {
    const r = await call(
      app,
      'listClientKeys',
      {
        key: PLATFORM_KEY,
      },
      { query: { tenantId: '00000000-0000-4000-8000-000000000000' } },
    )
    t.equal(r.status, 404)
    t.equal(r.body.code, 'TENANT_NOT_FOUND')
  })

  t.test('403 FORBIDDEN for a tenant admin', async (t) => {
    const r = await call(app, 'listClientKeys', { token: a.jwt })
    t.equal(r.status, 403)
    t.equal(r.body.code, 'FORBIDDEN')
  })

  t.test('400 VALIDATION_ERROR for a tenantId that is not a UUID', async (t) => {
    const r = await call(app, 'listClientKeys', { key: PLATFORM_KEY }, { query: { tenantId: 'x' } })
    t.equal(r.status, 400)
  })
})

t.test('updateClientKey: PATCH /client-keys/:id', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const k = await newClientKey(
    app,
    { token: a.jwt },
    {
      name: 'k',
      scopes: ['users:read'],
      ipAllowlist: ['10.0.0.0/8'],
      originAllowlist: ['https://a.test'],
    },
  )

  t.test('200: name, scopes, allowlists and expiry change; lists are replaced', async (t) => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const r = await call(
      app,
      'updateClientKey',
      { token: a.jwt },
      {
        params: { id: k.id },
        body: {
          name: 'renamed',
          scopes: ['users:read', 'roles:read'],
          ipAllowlist: ['203.0.113.0/24'],
          originAllowlist: [],
          expiresAt,
        },
      },
    )
    t.equal(r.status, 200)
    t.equal(r.body.data.name, 'renamed')
    t.same(r.body.data.scopes, ['users:read', 'roles:read'])
    t.same(r.body.data.ipAllowlist, ['203.0.113.0/24'])
    t.same(r.body.data.originAllowlist, [])
    t.equal(r.body.data.expiresAt, expiresAt)
    t.notOk('key' in r.body.data)
    const again = await call(app, 'getClientKey', { token: a.jwt }, { params: { id: k.id } })
    t.same(again.body.data, r.body.data)
  })

  t.test('the change applies to the next request at once', async (t) => {
    const blocked = await call(app, 'listTenantClientKeys', { key: k.key, ip: '10.9.9.9' })
    t.equal(blocked.status, 403)
    t.equal(blocked.body.code, 'IP_NOT_ALLOWED')
    const ok = await call(app, 'listTenantClientKeys', { key: k.key, ip: '203.0.113.9' })
    t.equal(ok.status, 200)
  })

  t.test('400 VALIDATION_ERROR', async (t) => {
    for (const payload of [
      {},
      { expiresAt: '2001-01-01T00:00:00Z' },
      { ipAllowlist: ['nope'] },
      { status: 'ACTIVE' },
    ]) {
      const r = await call(app, 'updateClientKey', { token: a.jwt }, { params: { id: k.id }, body: payload })
      t.equal(r.status, 400, JSON.stringify(payload))
      t.equal(r.body.code, 'VALIDATION_ERROR')
    }
  })

  t.test("404 CLIENT_KEY_NOT_FOUND for another tenant's key", async (t) => {
    const r = await call(
      app,
      'updateClientKey',
      { token: b.jwt },
      { params: { id: k.id }, body: { name: 'mine' } },
    )
    t.equal(r.status, 404)
    t.equal(r.body.code, 'CLIENT_KEY_NOT_FOUND')
  })
})

t.test('revokeClientKey: POST /client-keys/:id/revoke', async (t) => {
  const a = await tenantWithAdmin()
  const b = await tenantWithAdmin()
  const k = await newClientKey(app, { token: a.jwt }, { name: 'k', scopes: ['client-keys:read'] })
  t.equal((await call(app, 'listTenantClientKeys', { key: k.key })).status, 200, 'works before')

  t.test("404 CLIENT_KEY_NOT_FOUND for another tenant's key", async (t) => {
    const r = await call(app, 'revokeClientKey', { token: b.jwt }, { params: { id: k.id } })
    t.equal(r.status, 404)
    t.equal(r.body.code, 'CLIENT_KEY_NOT_FOUND')
  })

  t.test('400 VALIDATION_ERROR for a non-empty body', async (t) => {
    const r = await call(
      app,
      'revokeClientKey',
      { token: a.jwt },
      { params: { id: k.id }, body: unchecked({ reason: 'x' }) },
    )
    t.equal(r.status, 400)
  })

  t.test('200 REVOKED, refused at once, idempotent', async (t) => {
    const r = await call(app, 'revokeClientKey', { token: a.jwt }, { params: { id: k.id }, body: {} })
    t.equal(r.status, 200)
    t.equal(r.body.data.status, 'REVOKED')
    t.ok(r.body.data.revokedAt)
    t.notOk('key' in r.body.data)
    const use = await call(app, 'listTenantClientKeys', { key: k.key })
    t.equal(use.status, 401)
    t.equal(use.body.code, 'UNAUTHORIZED')
    const again = await call(app, 'revokeClientKey', { token: a.jwt }, { params: { id: k.id } })
    t.equal(again.status, 200)
    t.equal(again.body.data.revokedAt, r.body.data.revokedAt, 'the first revocation time stays')
  })
})

t.test('listClientKeyScopes: GET /client-keys/scopes', async (t) => {
  const a = await tenantWithAdmin()

  t.test('200: a tenant admin gets what it holds, never admin:* or tenants:create', async (t) => {
    const r = await call(app, 'listClientKeyScopes', { token: a.jwt })
    t.equal(r.status, 200)
    const scopes = r.body.data.items.map((i: { scope: string }) => i.scope)
    for (const s of ['users:create', 'users:read', 'users:*', 'client-keys:create', 'auth:logs']) {
      t.ok(scopes.includes(s), s)
    }
    for (const s of ['admin:*', 'tenants:create', 'tenants:delete', 'tenants:*'])
      t.notOk(scopes.includes(s), s)
    t.same(scopes, [...scopes].sort(), 'sorted')
    const read = r.body.data.items.find((i: { scope: string }) => i.scope === 'users:read')
    t.type(read?.description, 'string')
  })

  t.test('200: a narrow credential gets only its own scopes', async (t) => {
    const user = await createUser(app, a.tenant, { permissions: ['client-keys:create', 'users:read'] })
    const r = await call(app, 'listClientKeyScopes', { token: await tokenFor(app, user) })
    t.same(
      r.body.data.items.map((i: { scope: string }) => i.scope),
      ['client-keys:create', 'users:read'],
    )
    const key = await createKey(app, a.tenant, ['users:*'])
    const k = await call(app, 'listClientKeyScopes', { key: key.value })
    t.same(
      k.body.data.items.map((i: { scope: string }) => i.scope),
      ['users:*', 'users:create', 'users:delete', 'users:read', 'users:update'],
    )
  })

  t.test('200: the platform key may give admin:*', async (t) => {
    const r = await call(app, 'listClientKeyScopes', { key: PLATFORM_KEY })
    t.ok(r.body.data.items.some((i: { scope: string }) => i.scope === 'admin:*'))
  })

  t.test('401 UNAUTHORIZED without a credential', async (t) => {
    const r = await call(app, 'listClientKeyScopes')
    t.equal(r.status, 401)
  })
})
