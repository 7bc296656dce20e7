import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import {
  createTenant,
  createUser,
  insertRole,
  keyCred,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, unchecked } from '../helpers/call.js'

const app = await buildTestApp(t)

const BUILTIN = [
  'users:read',
  'users:create',
  'users:update',
  'users:delete',
  'roles:read',
  'roles:create',
  'roles:update',
  'roles:delete',
  'roles:assign',
  'roles:revoke',
  'permissions:read',
  'permissions:create',
  'permissions:update',
  'permissions:delete',
  'permissions:grant',
  'permissions:revoke',
  'tenants:read',
  'tenants:create',
  'tenants:update',
  'tenants:delete',
  'client-keys:read',
  'client-keys:create',
  'client-keys:update',
  'oauth-clients:create',
  'oauth-clients:delete',
  'oauth-clients:read',
  'oauth-clients:update',
  'identity-providers:create',
  'identity-providers:delete',
  'identity-providers:read',
  'identity-providers:update',
  'client-keys:revoke',
  'auth:logs',
  'admin:*',
]

const names = (items: { name: string }[]) => items.map((p) => p.name)

t.test('listPermissions, listCustomPermissions: GET /permissions and GET /permissions/custom', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })
  await call(app, 'createPermission', admin.cred, {
    body: {
      name: 'invoices:approve',
      description: 'Approve',
    },
  })
  await call(app, 'createPermission', otherAdmin.cred, { body: { name: 'secret:peek' } })

  t.test(
    'listPermissions: 200 with the built-in catalogue plus the tenant’s custom ones, newest first; never another tenant’s',
    async (t) => {
      const res = await call(app, 'listPermissions', admin.cred, { query: { limit: 100 } })
      t.equal(res.status, 200)
      t.equal(res.data.total, BUILTIN.length + 1)
      t.same([...names(res.data.items)].sort(), [...BUILTIN, 'invoices:approve'].sort())
      t.equal(res.data.items[0]?.name, 'invoices:approve')
      t.match(res.data.items[0], {
        resource: 'invoices',
        action: 'approve',
        description: 'Approve',
        isSystem: false,
        tenantId: tenant.id,
      })
      const builtin = res.data.items.find((p: { name: string }) => p.name === 'users:read')
      t.match(builtin, { isSystem: true, tenantId: null, resource: 'users', action: 'read' })
    },
  )

  t.test('listPermissions: 200 with paging', async (t) => {
    const res = await call(app, 'listPermissions', admin.cred, { query: { limit: 5, offset: 5 } })
    t.equal(res.data.items.length, 5)
    t.equal(res.data.offset, 5)
    t.equal(res.data.total, BUILTIN.length + 1)
  })

  t.test('listCustomPermissions: 200 with only the tenant’s custom permissions', async (t) => {
    const res = await call(app, 'listCustomPermissions', admin.cred)
    t.equal(res.status, 200)
    t.same(names(res.data.items), ['invoices:approve'])
    t.equal(res.data.total, 1)
    const theirs = await call(app, 'listCustomPermissions', otherAdmin.cred)
    t.same(names(theirs.data.items), ['secret:peek'])
  })

  t.test('listCustomPermissions: 200, a granted wildcard is not listed as a permission', async (t) => {
    const u = await createUser(app, tenant)
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    t.equal(
      (
        await call(app, 'grantPermission', fresh.cred, {
          body: {
            userId: u.id,
            permission: 'invoices:*',
          },
        })
      ).status,
      200,
    )
    const res = await call(app, 'listCustomPermissions', admin.cred)
    t.same(names(res.data.items), ['invoices:approve'])
  })

  t.test('listPermissions, listCustomPermissions: 400 VALIDATION_ERROR for limit above 100', async (t) => {
    t.equal(
      (await call(app, 'listPermissions', admin.cred, { query: { limit: 101 } })).code,
      'VALIDATION_ERROR',
    )
    t.equal(
      (await call(app, 'listCustomPermissions', admin.cred, { query: { offset: -1 } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('listPermissions, listCustomPermissions: 403 FORBIDDEN without permissions:read', async (t) => {
    const key = await keyCred(app, tenant, ['users:read'])
    t.equal((await call(app, 'listPermissions', key)).code, 'FORBIDDEN')
    t.equal((await call(app, 'listCustomPermissions', key)).code, 'FORBIDDEN')
    const reader = await keyCred(app, tenant, ['permissions:read'])
    t.equal((await call(app, 'listPermissions', reader)).status, 200)
  })
})

t.test('createPermission: POST /permissions', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })

  t.test(
    '201: resource and action from the name; the tenant admin role holds it and its wildcard',
    async (t) => {
      const res = await call(app, 'createPermission', admin.cred, {
        body: {
          name: 'reports:export',
          description: null,
        },
      })
      t.equal(res.status, 201)
      t.match(res.data, {
        name: 'reports:export',
        resource: 'reports',
        action: 'export',
        isSystem: false,
        tenantId: tenant.id,
      })
      const adminRole = (await call(app, 'listRoles', admin.cred)).data.items.find(
        (r: { name: string }) => r.name === 'admin',
      )
      t.ok(adminRole?.permissions.includes('reports:export'))
      t.ok(adminRole?.permissions.includes('reports:*'))
      const custom = await call(app, 'createPermission', admin.cred, { body: { name: 'users:export' } })
      t.equal(custom.status, 201, 'a custom action of a built-in resource')
    },
  )

  t.test(
    '400 VALIDATION_ERROR for a bad name, a wildcard, the reserved admin resource, extras',
    async (t) => {
      for (const body of [
        {},
        { name: 'NoColon' },
        { name: 'Reports:Export' },
        { name: 'reports:*' },
        { name: 'admin:stuff' },
        { name: 'reports:x', resource: 'reports' },
      ]) {
        t.equal(
          (await call(app, 'createPermission', admin.cred, { body: unchecked(body) })).code,
          'VALIDATION_ERROR',
          JSON.stringify(body),
        )
      }
    },
  )

  t.test('403 FORBIDDEN without permissions:create', async (t) => {
    const key = await keyCred(app, tenant, ['permissions:read'])
    t.equal((await call(app, 'createPermission', key, { body: { name: 'a:b' } })).code, 'FORBIDDEN')
  })

  t.test(
    '409 PERMISSION_ALREADY_EXISTS for a built-in or a custom name; another tenant’s is free',
    async (t) => {
      const builtin = await call(app, 'createPermission', admin.cred, { body: { name: 'users:read' } })
      t.equal(builtin.status, 409)
      t.equal(builtin.code, 'PERMISSION_ALREADY_EXISTS')
      await call(app, 'createPermission', admin.cred, { body: { name: 'docs:sign' } })
      t.equal(
        (await call(app, 'createPermission', admin.cred, { body: { name: 'docs:sign' } })).code,
        'PERMISSION_ALREADY_EXISTS',
      )
      t.equal(
        (await call(app, 'createPermission', otherAdmin.cred, { body: { name: 'docs:sign' } })).status,
        201,
      )
    },
  )
})

/** A tenant with its admin, and another tenant's custom permission (secret:peek) it must not reach. */
async function tenantBesideAForeignPermission() {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })
  const foreign = (await call(app, 'createPermission', otherAdmin.cred, { body: { name: 'secret:peek' } }))
    .data
  return { tenant, admin, otherAdmin, foreign }
}

t.test('updatePermission: PATCH /permissions/:id', async (t) => {
  const { tenant, admin, foreign } = await tenantBesideAForeignPermission()
  const builtin = (await call(app, 'listPermissions', admin.cred, { query: { limit: 100 } })).data.items.find(
    (p: { name: string }) => p.name === 'users:read',
  )

  t.test('200: renames (resource and action follow) and redescribes; grants follow the rename', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'ships:sail' } })).data
    const u = await createUser(app, tenant)
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    await call(app, 'grantPermission', fresh.cred, {
      body: {
        userId: u.id,
        permission: 'ships:sail',
      },
    })
    const res = await call(app, 'updatePermission', admin.cred, {
      params: { id: p.id },
      body: {
        name: 'boats:row',
        description: 'Row',
      },
    })
    t.equal(res.status, 200)
    t.match(res.data, { id: p.id, name: 'boats:row', resource: 'boats', action: 'row', description: 'Row' })
    const perms = await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })
    t.same(perms.data.direct, ['boats:row'])
  })

  t.test('400 VALIDATION_ERROR for an empty body, a bad name, a wildcard, a non-UUID id', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'cars:drive' } })).data
    for (const body of [{}, { name: 'x' }, { name: 'cars:*' }, { action: 'go' }]) {
      t.equal(
        (await call(app, 'updatePermission', admin.cred, { params: { id: p.id }, body })).code,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      )
    }
    t.equal(
      (await call(app, 'updatePermission', admin.cred, { params: { id: 'zzz' }, body: { description: 'x' } }))
        .code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without permissions:update', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'vans:drive' } })).data
    const key = await keyCred(app, tenant, ['permissions:create'])
    t.equal(
      (await call(app, 'updatePermission', key, { params: { id: p.id }, body: { description: 'x' } })).code,
      'FORBIDDEN',
    )
  })

  t.test('404 PERMISSION_NOT_FOUND for an unknown id and another tenant’s custom permission', async (t) => {
    t.equal(
      (
        await call(app, 'updatePermission', admin.cred, {
          params: { id: UNKNOWN_ID },
          body: { description: 'x' },
        })
      ).code,
      'PERMISSION_NOT_FOUND',
    )
    const res = await call(app, 'updatePermission', admin.cred, {
      params: { id: foreign.id },
      body: {
        description: 'x',
      },
    })
    t.equal(res.status, 404)
    t.equal(res.code, 'PERMISSION_NOT_FOUND')
  })

  t.test(
    '409: SYSTEM_RESOURCE_PROTECTED for a built-in; PERMISSION_ALREADY_EXISTS for a taken name',
    async (t) => {
      const res = await call(app, 'updatePermission', admin.cred, {
        params: { id: builtin!.id },
        body: {
          description: 'mine now',
        },
      })
      t.equal(res.status, 409)
      t.equal(res.code, 'SYSTEM_RESOURCE_PROTECTED')
      const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'trains:run' } })).data
      const renameTo = async (name: string) =>
        (await call(app, 'updatePermission', admin.cred, { params: { id: p.id }, body: { name } })).code
      t.equal(await renameTo('users:read'), 'PERMISSION_ALREADY_EXISTS')
      await call(app, 'createPermission', admin.cred, { body: { name: 'trains:stop' } })
      t.equal(await renameTo('trains:stop'), 'PERMISSION_ALREADY_EXISTS')
    },
  )
})

t.test('deletePermission: DELETE /permissions/:id and the life of a wildcard', async (t) => {
  const { tenant, admin, otherAdmin, foreign } = await tenantBesideAForeignPermission()

  t.test('200 {id, deleted}: removed from roles and direct grants', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'ink:spill' } })).data
    const roleId = await insertRole(app, tenant, 'spiller', 1, ['ink:spill'])
    const u = await createUser(app, tenant, { permissions: ['ink:spill'] })
    const res = await call(app, 'deletePermission', admin.cred, { params: { id: p.id } })
    t.equal(res.status, 200)
    t.same(res.data, { id: p.id, deleted: true })
    t.same(
      (await call(app, 'getRolePermissions', admin.cred, { params: { id: roleId } })).data.permissions,
      [],
    )
    t.same((await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })).data.direct, [])
  })

  t.test('r:* exists while a permission of r does: its grants go with the last one', async (t) => {
    const a = (await call(app, 'createPermission', admin.cred, { body: { name: 'pens:write' } })).data
    const b = (await call(app, 'createPermission', admin.cred, { body: { name: 'pens:erase' } })).data
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    const u = await createUser(app, tenant)
    t.equal(
      (
        await call(app, 'grantPermission', fresh.cred, {
          body: {
            userId: u.id,
            permission: 'pens:*',
          },
        })
      ).status,
      200,
    )
    await call(app, 'deletePermission', admin.cred, { params: { id: a.id } })
    t.same(
      (await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })).data.direct,
      ['pens:*'],
      'pens:erase remains',
    )
    await call(app, 'deletePermission', admin.cred, { params: { id: b.id } })
    t.same(
      (await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })).data.direct,
      [],
      'the wildcard went too',
    )
    const again = await call(app, 'grantPermission', fresh.cred, {
      body: {
        userId: u.id,
        permission: 'pens:*',
      },
    })
    t.equal(again.code, 'PERMISSION_NOT_FOUND')
    const check = await call(app, 'checkPermission', fresh.cred, { body: { permission: 'pens:*' } })
    t.equal(check.code, 'PERMISSION_NOT_FOUND')
  })

  t.test('renaming the last permission of a resource away drops that resource’s wildcard', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'cups:fill' } })).data
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    const u = await createUser(app, tenant)
    await call(app, 'grantPermission', fresh.cred, { body: { userId: u.id, permission: 'cups:*' } })
    await call(app, 'updatePermission', admin.cred, { params: { id: p.id }, body: { name: 'mugs:fill' } })
    t.same((await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })).data.direct, [])
  })

  t.test('400 VALIDATION_ERROR for a non-UUID id', async (t) => {
    t.equal(
      (await call(app, 'deletePermission', admin.cred, { params: { id: '1' } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without permissions:delete', async (t) => {
    const p = (await call(app, 'createPermission', admin.cred, { body: { name: 'keep:me' } })).data
    const key = await keyCred(app, tenant, ['permissions:update'])
    t.equal((await call(app, 'deletePermission', key, { params: { id: p.id } })).code, 'FORBIDDEN')
  })

  t.test('404 PERMISSION_NOT_FOUND for an unknown id and another tenant’s (which survives)', async (t) => {
    t.equal(
      (await call(app, 'deletePermission', admin.cred, { params: { id: UNKNOWN_ID } })).code,
      'PERMISSION_NOT_FOUND',
    )
    t.equal(
      (await call(app, 'deletePermission', admin.cred, { params: { id: foreign.id } })).code,
      'PERMISSION_NOT_FOUND',
    )
    t.same(names((await call(app, 'listCustomPermissions', otherAdmin.cred)).data.items), ['secret:peek'])
  })

  t.test('409 SYSTEM_RESOURCE_PROTECTED for a built-in permission', async (t) => {
    const builtin = (
      await call(app, 'listPermissions', admin.cred, { query: { limit: 100 } })
    ).data.items.find((p: { name: string }) => p.name === 'roles:read')
    const res = await call(app, 'deletePermission', admin.cred, { params: { id: builtin!.id } })
    t.equal(res.status, 409)
    t.equal(res.code, 'SYSTEM_RESOURCE_PROTECTED')
  })
})
