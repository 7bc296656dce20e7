import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import { createTenant, insertRole, keyCred, UNKNOWN_ID, userWithToken } from '../helpers/fixtures.js'
import { ORIGIN, PK_ENV, tenantWithKey } from './support.js'

// The management operations of publishable keys (contract section 20): each one's success and every
// status it declares that the gate's sweep (test/system/contract-sweep.test.ts) does not already answer.

const PK_SHAPE = /^pk_[A-Za-z0-9_-]{43}$/

t.test('publishable keys: the management operations', async (t) => {
  const app = await buildTestApp(t, PK_ENV)

  t.test('createPublishableKey: 201 the key, whole, with the defaults', async (t) => {
    const { tenant, key } = await tenantWithKey(app, {
      allowedOrigins: ['https://Signup.Example.test:443/', 'http://localhost:5173', ORIGIN],
    })
    t.match(key.key, PK_SHAPE)
    t.equal(key.tenantId, tenant.id)
    t.same(key.allowedOrigins, [ORIGIN, 'http://localhost:5173'], 'serialized and deduplicated')
    t.same(key.defaultRoles, [])
    t.equal(key.signupsPerHour, 100)
    t.equal(key.status, 'ACTIVE')
    t.equal(key.revokedAt, null)
  })

  t.test(
    'createPublishableKey: 400 VALIDATION_ERROR for an http origin off loopback, or no origin',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const plain = await call(app, 'createPublishableKey', admin.cred, {
        body: { name: 'k', allowedOrigins: ['http://signup.example.test'] },
      })
      t.equal(plain.status, 400)
      t.equal(plain.code, 'VALIDATION_ERROR')
      const none = await call(app, 'createPublishableKey', admin.cred, {
        body: { name: 'k', allowedOrigins: [] },
      })
      t.equal(none.status, 400)
      const many = await call(app, 'createPublishableKey', admin.cred, {
        body: { name: 'k', allowedOrigins: Array.from({ length: 21 }, (_, i) => `https://a${i}.test`) },
      })
      t.equal(many.status, 400, 'at most 20 origins')
    },
  )

  t.test('createPublishableKey: 403 FORBIDDEN for a default role with a management permission', async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    for (const perm of ['users:delete', 'roles:assign', 'client-keys:create', 'tenants:read']) {
      const role = `r-${perm.replace(':', '-')}`
      await insertRole(app, tenant, role, 10, [perm])
      const res = await call(app, 'createPublishableKey', admin.cred, {
        body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: [role] },
      })
      t.equal(res.status, 403, perm)
      t.equal(res.code, 'FORBIDDEN')
    }
    const res = await call(app, 'createPublishableKey', admin.cred, {
      body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['admin'] },
    })
    t.equal(res.code, 'FORBIDDEN', 'the admin role')
  })

  t.test('createPublishableKey: 403 FORBIDDEN for a role with a permission the caller lacks', async (t) => {
    const tenant = await createTenant(app)
    await insertRole(app, tenant, 'reader', 10, ['auth:logs'])
    const creator = await keyCred(app, tenant, ['client-keys:create'])
    const res = await call(app, 'createPublishableKey', creator, {
      body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['reader'] },
    })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    const holder = await keyCred(app, tenant, ['client-keys:create', 'auth:logs'])
    const ok = await call(app, 'createPublishableKey', holder, {
      body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['reader'] },
    })
    t.equal(ok.status, 201, 'a caller holding every permission of the role may give it')
  })

  t.test('createPublishableKey: 404 ROLE_NOT_FOUND for an unknown default role', async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'createPublishableKey', admin.cred, {
      body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['no-such-role'] },
    })
    t.equal(res.status, 404)
    t.equal(res.code, 'ROLE_NOT_FOUND')
  })

  t.test('listPublishableKeys: 200 the tenant’s keys, newest first, filtered by status', async (t) => {
    const { tenant, admin, key } = await tenantWithKey(app)
    const second = await call(app, 'createPublishableKey', admin.cred, {
      body: { name: 'second', allowedOrigins: [ORIGIN] },
    })
    await tenantWithKey(app) // another tenant's key is never listed
    const res = await call(app, 'listPublishableKeys', admin.cred)
    t.equal(res.status, 200)
    t.same(
      res.data.items.map((k) => k.id),
      [second.data.id, key.id],
    )
    t.ok(res.data.items.every((k) => k.tenantId === tenant.id))
    await call(app, 'revokePublishableKey', admin.cred, { params: { id: key.id } })
    const revoked = await call(app, 'listPublishableKeys', admin.cred, { query: { status: 'REVOKED' } })
    t.same(
      revoked.data.items.map((k) => k.id),
      [key.id],
    )
  })

  t.test(
    'getPublishableKey: 200 the key; 404 CLIENT_KEY_NOT_FOUND for another tenant’s or an unknown id',
    async (t) => {
      const { admin, key } = await tenantWithKey(app)
      const res = await call(app, 'getPublishableKey', admin.cred, { params: { id: key.id } })
      t.equal(res.status, 200)
      t.same(res.data, key)
      const other = await tenantWithKey(app)
      const foreign = await call(app, 'getPublishableKey', admin.cred, { params: { id: other.key.id } })
      t.equal(foreign.status, 404)
      t.equal(foreign.code, 'CLIENT_KEY_NOT_FOUND')
      const unknown = await call(app, 'getPublishableKey', admin.cred, { params: { id: UNKNOWN_ID } })
      t.equal(unknown.code, 'CLIENT_KEY_NOT_FOUND')
    },
  )

  t.test('updatePublishableKey: 200 the changes; 400, 403, 404 as at creation', async (t) => {
    const { tenant, admin, key } = await tenantWithKey(app)
    const res = await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: key.id },
      body: {
        name: 'renamed',
        allowedOrigins: ['https://new.example.test'],
        signupsPerHour: 5,
        defaultRoles: ['user'],
      },
    })
    t.equal(res.status, 200)
    t.equal(res.data.name, 'renamed')
    t.same(res.data.allowedOrigins, ['https://new.example.test'])
    t.equal(res.data.signupsPerHour, 5)
    t.same(res.data.defaultRoles, ['user'])
    const empty = await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: key.id },
      body: unchecked({}),
    })
    t.equal(empty.status, 400, 'an empty body changes nothing')
    await insertRole(app, tenant, 'deleter', 10, ['users:delete'])
    const bad = await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: key.id },
      body: { defaultRoles: ['deleter'] },
    })
    t.equal(bad.status, 403)
    t.equal(bad.code, 'FORBIDDEN')
    const missing = await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: UNKNOWN_ID },
      body: { name: 'x' },
    })
    t.equal(missing.status, 404)
    t.equal(missing.code, 'CLIENT_KEY_NOT_FOUND')
  })

  t.test('revokePublishableKey: 200 REVOKED, idempotent; 404 for another tenant’s key', async (t) => {
    const { admin, key } = await tenantWithKey(app)
    const first = await call(app, 'revokePublishableKey', admin.cred, { params: { id: key.id } })
    t.equal(first.status, 200)
    t.equal(first.data.status, 'REVOKED')
    t.ok(first.data.revokedAt)
    const again = await call(app, 'revokePublishableKey', admin.cred, { params: { id: key.id } })
    t.equal(again.data.revokedAt, first.data.revokedAt, 'the first revocation time stays')
    const other = await tenantWithKey(app)
    const foreign = await call(app, 'revokePublishableKey', admin.cred, { params: { id: other.key.id } })
    t.equal(foreign.status, 404)
    t.equal(foreign.code, 'CLIENT_KEY_NOT_FOUND')
  })
})
