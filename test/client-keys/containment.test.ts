import t from 'tap'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { call, type As } from '../helpers/call.js'

// Scope containment (createClientKey in openapi/paths/client-keys.yaml): a caller gives only scopes it holds, admin:* only
// inside the platform tenant, and only scopes that exist in the key's tenant.
const app = await buildTestApp(t)

const tenant = await createTenant(app)
const other = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const adminJwt = await tokenFor(app, admin)
const narrow = await createUser(app, tenant, {
  permissions: ['client-keys:create', 'client-keys:update', 'users:read'],
})
const narrowJwt = await tokenFor(app, narrow)
// A custom permission of `tenant` only; created before the admin token below so its claims carry it.
await app.ctx.dbs.main
  .insertInto('permissions')
  .values({ tenant_id: tenant.id, name: 'reports:export', resource: 'reports', action: 'export' })
  .execute()
const adminJwtWithCustom = await tokenFor(app, admin)

const create = (as: As, scopes: string[], extra: object = {}) =>
  call(app, 'createClientKey', as, { body: { name: 'k', scopes, ...extra } })

t.test('createClientKey: scopes within the caller’s', async (t) => {
  t.test('201 for scopes the caller holds, exactly or through a wildcard', async (t) => {
    t.equal((await create({ token: narrowJwt }, ['users:read'])).status, 201)
    t.equal((await create({ token: adminJwt }, ['users:*', 'roles:assign'])).status, 201)
    t.equal((await create({ token: adminJwtWithCustom }, ['reports:export', 'reports:*'])).status, 201)
  })

  t.test('403 FORBIDDEN for a scope the caller does not hold', async (t) => {
    for (const scopes of [['users:create'], ['users:read', 'users:delete'], ['users:*']]) {
      const r = await create({ token: narrowJwt }, scopes)
      t.equal(r.status, 403, scopes.join(','))
      t.equal(r.body.code, 'FORBIDDEN')
    }
  })

  t.test('403 FORBIDDEN for admin:* outside the platform tenant, even from the platform', async (t) => {
    const r = await create({ token: adminJwt }, ['admin:*'])
    t.equal(r.status, 403)
    t.equal(r.body.code, 'FORBIDDEN')
    const p = await create({ key: PLATFORM_KEY }, ['admin:*'], { tenantId: other.id })
    t.equal(p.status, 403)
    t.equal(p.body.code, 'FORBIDDEN')
  })

  t.test('201 for admin:* inside the platform tenant by an admin:* holder', async (t) => {
    const r = await create({ key: PLATFORM_KEY }, ['admin:*'])
    t.equal(r.status, 201)
    const list = await call(app, 'listClientKeys', { key: r.body.data.key })
    t.equal(list.status, 200, 'the new key acts as a platform admin')
  })

  t.test('404 PERMISSION_NOT_FOUND for a scope that does not exist in the key tenant', async (t) => {
    for (const [cred, scopes, extra] of [
      [{ token: adminJwt }, ['nothing:read'], {}],
      [{ token: adminJwt }, ['nothing:*'], {}],
      [{ key: PLATFORM_KEY }, ['reports:export'], { tenantId: other.id }],
    ] as const) {
      const r = await create(cred, [...scopes], extra)
      t.equal(r.status, 404, scopes.join(','))
      t.equal(r.body.code, 'PERMISSION_NOT_FOUND')
    }
  })

  t.test('a Client Key gives only its own scopes', async (t) => {
    const key = await createKey(app, tenant, ['client-keys:create', 'users:read'])
    const ok = await create({ key: key.value }, ['users:read'])
    t.equal(ok.status, 201)
    const row = await app.ctx.dbs.main
      .selectFrom('client_keys')
      .select(['created_by_type', 'created_by_id'])
      .where('id', '=', ok.body.data.id)
      .executeTakeFirstOrThrow()
    t.same(row, { created_by_type: 'client_key', created_by_id: key.id })
    const no = await create({ key: key.value }, ['users:create'])
    t.equal(no.status, 403)
    t.equal(no.body.code, 'FORBIDDEN')
  })
})

t.test('updateClientKey: scopes within the caller’s', async (t) => {
  const k = (await create({ token: narrowJwt }, ['users:read'])).body.data

  t.test('403 FORBIDDEN for a scope the caller does not hold; nothing changes', async (t) => {
    const r = await call(
      app,
      'updateClientKey',
      { token: narrowJwt },
      { params: { id: k.id }, body: { name: 'changed', scopes: ['users:read', 'users:delete'] } },
    )
    t.equal(r.status, 403)
    t.equal(r.body.code, 'FORBIDDEN')
    const now = await call(app, 'getClientKey', { token: adminJwt }, { params: { id: k.id } })
    t.equal(now.body.data.name, 'k')
    t.same(now.body.data.scopes, ['users:read'])
  })

  t.test('403 FORBIDDEN for admin:* outside the platform tenant', async (t) => {
    const r = await call(
      app,
      'updateClientKey',
      { token: adminJwt },
      { params: { id: k.id }, body: { scopes: ['admin:*'] } },
    )
    t.equal(r.status, 403)
  })

  t.test('404 PERMISSION_NOT_FOUND for an unknown scope', async (t) => {
    const r = await call(
      app,
      'updateClientKey',
      { token: adminJwt },
      { params: { id: k.id }, body: { scopes: ['nothing:read'] } },
    )
    t.equal(r.status, 404)
    t.equal(r.body.code, 'PERMISSION_NOT_FOUND')
  })

  t.test('200 for held scopes; a narrower key is refused what it lost at once', async (t) => {
    const wide = (await create({ token: adminJwt }, ['client-keys:read', 'users:read'])).body.data
    t.equal((await call(app, 'getClientKey', { key: wide.key }, { params: { id: wide.id } })).status, 200)
    const r = await call(
      app,
      'updateClientKey',
      { token: adminJwt },
      { params: { id: wide.id }, body: { scopes: ['users:read'] } },
    )
    t.equal(r.status, 200)
    t.same(r.body.data.scopes, ['users:read'])
    const after = await call(app, 'getClientKey', { key: wide.key }, { params: { id: wide.id } })
    t.equal(after.status, 403)
    t.equal(after.body.code, 'FORBIDDEN')
  })
})

t.test('rotateClientKey: scopes within the caller’s', async (t) => {
  t.test(
    '403 FORBIDDEN when the key holds a scope the caller lacks (its new value would hand it over)',
    async (t) => {
      const k = (await create({ token: adminJwt }, ['users:delete'])).body.data
      const r = await call(app, 'rotateClientKey', { token: narrowJwt }, { params: { id: k.id } })
      t.equal(r.status, 403)
      t.equal(r.body.code, 'FORBIDDEN')
      t.equal((await call(app, 'rotateClientKey', { token: adminJwt }, { params: { id: k.id } })).status, 200)
    },
  )
})
