import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import {
  createTenant,
  insertRole,
  keyCred,
  platformTenant,
  roleByName,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, unchecked } from '../helpers/call.js'

const app = await buildTestApp(t)

/** A caller holding exactly these roles and grants, plus a fresh tenant. */
async function tenantWithAdmin() {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  return { tenant, admin }
}

t.test(
  'listRoles, getRole, getRolePermissions: GET /roles, GET /roles/:id, GET /roles/:id/permissions',
  async (t) => {
    const { tenant, admin } = await tenantWithAdmin()
    const other = await createTenant(app)
    const foreignRole = await insertRole(app, other, 'foreign', 1)

    t.test(
      'listRoles: 200 with the built-in roles of a new tenant; admin holds every permission but admin:*, tenants:create/delete',
      async (t) => {
        const res = await call(app, 'listRoles', admin.cred)
        t.equal(res.status, 200)
        t.equal(res.data.total, 2)
        const byName = Object.fromEntries(res.data.items.map((r) => [r.name, r]))
        t.match(byName.admin, { level: 100, isSystem: true, tenantId: tenant.id })
        t.match(byName.user, { level: 0, isSystem: true, permissions: [] })
        const perms: string[] = byName.admin!.permissions
        for (const p of [
          'users:read',
          'users:*',
          'roles:assign',
          'client-keys:*',
          'auth:logs',
          'tenants:read',
          'tenants:update',
        ])
          t.ok(perms.includes(p), p)
        for (const p of ['admin:*', 'tenants:create', 'tenants:delete', 'tenants:*'])
          t.notOk(perms.includes(p), p)
      },
    )

    t.test('listRoles: 200; in the platform tenant, admin holds admin:*', async (t) => {
      const platform = await platformTenant(app)
      const root = await userWithToken(app, platform, { roles: ['admin'] })
      const res = await call(app, 'listRoles', root.cred)
      const adminRole = res.data.items.find((r: { name: string }) => r.name === 'admin')
      t.same(adminRole?.permissions, ['admin:*'])
    })

    t.test('listRoles: 200 with paging, and never another tenant’s roles', async (t) => {
      await insertRole(app, tenant, 'editor', 10, ['users:read'])
      const res = await call(app, 'listRoles', admin.cred, { query: { limit: 1 } })
      t.equal(res.data.total, 3)
      t.equal(res.data.items.length, 1)
      t.equal(res.data.items[0]?.name, 'editor', 'newest first')
      const all = await call(app, 'listRoles', admin.cred, { query: { limit: 100 } })
      t.notOk(all.data.items.some((r: { name: string }) => r.name === 'foreign'))
    })

    t.test('getRole, getRolePermissions: 200 with one role and its permissions', async (t) => {
      const id = await insertRole(app, tenant, 'viewer', 5, ['users:read', 'roles:read'])
      const one = await call(app, 'getRole', admin.cred, { params: { id } })
      t.equal(one.status, 200)
      t.match(one.data, { id, name: 'viewer', level: 5, isSystem: false, description: null })
      t.same(one.data.permissions, ['roles:read', 'users:read'])
      const perms = await call(app, 'getRolePermissions', admin.cred, { params: { id } })
      t.same(perms.data, { roleId: id, permissions: ['roles:read', 'users:read'] })
    })

    t.test(
      'getRole, getRolePermissions, listRoles: 400 VALIDATION_ERROR for a non-UUID id or limit above 100',
      async (t) => {
        t.equal((await call(app, 'getRole', admin.cred, { params: { id: 'x' } })).code, 'VALIDATION_ERROR')
        t.equal(
          (await call(app, 'getRolePermissions', admin.cred, { params: { id: 'x' } })).code,
          'VALIDATION_ERROR',
        )
        t.equal(
          (await call(app, 'listRoles', admin.cred, { query: { limit: 500 } })).code,
          'VALIDATION_ERROR',
        )
      },
    )

    t.test('listRoles, getRole, getRolePermissions: 403 FORBIDDEN without roles:read', async (t) => {
      const key = await keyCred(app, tenant, ['users:read'])
      const { id } = await roleByName(app, tenant.id, 'admin')
      t.equal((await call(app, 'listRoles', key)).code, 'FORBIDDEN')
      t.equal((await call(app, 'getRole', key, { params: { id } })).code, 'FORBIDDEN')
      t.equal((await call(app, 'getRolePermissions', key, { params: { id } })).code, 'FORBIDDEN')
      const reader = await keyCred(app, tenant, ['roles:read'])
      t.equal((await call(app, 'getRole', reader, { params: { id } })).status, 200)
    })

    t.test(
      'getRole, getRolePermissions: 404 ROLE_NOT_FOUND for an unknown id and another tenant’s role',
      async (t) => {
        for (const id of [UNKNOWN_ID, foreignRole]) {
          t.equal((await call(app, 'getRole', admin.cred, { params: { id } })).code, 'ROLE_NOT_FOUND')
          const res = await call(app, 'getRolePermissions', admin.cred, { params: { id } })
          t.equal(res.status, 404)
          t.equal(res.code, 'ROLE_NOT_FOUND')
        }
      },
    )
  },
)

t.test('createRole: POST /roles', async (t) => {
  const { tenant, admin } = await tenantWithAdmin()
  const other = await createTenant(app)
  const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })
  await call(app, 'createPermission', otherAdmin.cred, { body: { name: 'reports:export' } })

  t.test('201: a custom role with level, description and permissions (wildcards included)', async (t) => {
    const res = await call(app, 'createRole', admin.cred, {
      body: {
        name: 'support',
        description: 'Helps users',
        level: 20,
        permissions: ['users:read', 'users:update', 'roles:*'],
      },
    })
    t.equal(res.status, 201)
    t.match(res.data, {
      name: 'support',
      description: 'Helps users',
      level: 20,
      isSystem: false,
      tenantId: tenant.id,
    })
    t.same(res.data.permissions, ['roles:*', 'users:read', 'users:update'])
    const plain = await call(app, 'createRole', admin.cred, { body: { name: 'bare' } })
    t.match(plain.data, { level: 0, permissions: [], description: null })
  })

  t.test(
    '400 VALIDATION_ERROR for a missing name, a level out of range, a bad permission name, extras',
    async (t) => {
      for (const body of [
        {},
        { name: '' },
        { name: 'x', level: 1001 },
        { name: 'x', level: -1 },
        { name: 'x', permissions: ['Users:Read'] },
        { name: 'x', permissions: ['users:read', 'users:read'] },
        { name: 'x', isSystem: true },
      ]) {
        t.equal(
          (await call(app, 'createRole', admin.cred, { body: unchecked(body) })).code,
          'VALIDATION_ERROR',
          JSON.stringify(body),
        )
      }
    },
  )

  t.test('403 FORBIDDEN without roles:create', async (t) => {
    const key = await keyCred(app, tenant, ['roles:read'])
    t.equal((await call(app, 'createRole', key, { body: { name: 'nope' } })).code, 'FORBIDDEN')
  })

  t.test('403 FORBIDDEN for admin:* outside the platform tenant', async (t) => {
    const res = await call(app, 'createRole', admin.cred, {
      body: {
        name: 'super',
        permissions: ['admin:*'],
      },
    })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
  })

  t.test(
    '404 PERMISSION_NOT_FOUND for an unknown name, another tenant’s custom one, an unbacked wildcard',
    async (t) => {
      for (const p of ['users:fly', 'reports:export', 'reports:*']) {
        const res = await call(app, 'createRole', admin.cred, { body: { name: `r-${p}`, permissions: [p] } })
        t.equal(res.status, 404, p)
        t.equal(res.code, 'PERMISSION_NOT_FOUND', p)
      }
    },
  )

  t.test(
    '409 ROLE_ALREADY_EXISTS for a taken name (built-in included); another tenant’s name is free',
    async (t) => {
      t.equal(
        (await call(app, 'createRole', admin.cred, { body: { name: 'admin' } })).code,
        'ROLE_ALREADY_EXISTS',
      )
      await call(app, 'createRole', admin.cred, { body: { name: 'twice' } })
      const res = await call(app, 'createRole', admin.cred, { body: { name: 'twice' } })
      t.equal(res.status, 409)
      t.equal(res.code, 'ROLE_ALREADY_EXISTS')
      t.equal((await call(app, 'createRole', otherAdmin.cred, { body: { name: 'twice' } })).status, 201)
    },
  )

  t.test('hierarchy: 403 above the caller’s level, or with a permission the caller lacks', async (t) => {
    const managerRole = await insertRole(app, tenant, 'manager', 50, ['roles:create', 'users:read'])
    t.ok(managerRole)
    const manager = await userWithToken(app, tenant, { roles: ['manager'] })
    const above = await call(app, 'createRole', manager.cred, { body: { name: 'boss', level: 51 } })
    t.equal(above.status, 403)
    t.equal(above.code, 'ROLE_HIERARCHY_VIOLATION')
    const lacks = await call(app, 'createRole', manager.cred, {
      body: {
        name: 'deleter',
        permissions: ['users:delete'],
      },
    })
    t.equal(lacks.code, 'ROLE_HIERARCHY_VIOLATION')
    const ok = await call(app, 'createRole', manager.cred, {
      body: {
        name: 'peer',
        level: 50,
        permissions: ['users:read'],
      },
    })
    t.equal(ok.status, 201)
  })

  t.test('hierarchy for a Client Key: containment in its scopes, no rank', async (t) => {
    const key = await keyCred(app, tenant, ['roles:create', 'users:read'])
    t.equal(
      (await call(app, 'createRole', key, { body: { name: 'k1', permissions: ['users:update'] } })).code,
      'ROLE_HIERARCHY_VIOLATION',
    )
    const ok = await call(app, 'createRole', key, {
      body: {
        name: 'k2',
        level: 900,
        permissions: ['users:read'],
      },
    })
    t.equal(ok.status, 201)
  })

  t.test('admin:* exempt: a platform admin creates a role with admin:* above its own level', async (t) => {
    const platform = await platformTenant(app)
    const root = await userWithToken(app, platform, { roles: ['admin'] })
    const res = await call(app, 'createRole', root.cred, {
      body: {
        name: 'operators',
        level: 1000,
        permissions: ['admin:*'],
      },
    })
    t.equal(res.status, 201)
    t.same(res.data.permissions, ['admin:*'])
  })
})

t.test('updateRole: PATCH /roles/:id', async (t) => {
  const { tenant, admin } = await tenantWithAdmin()
  const other = await createTenant(app)
  const foreignRole = await insertRole(app, other, 'foreign', 1)

  t.test('200: name, description and level change; updatedAt moves', async (t) => {
    const id = await insertRole(app, tenant, 'old-name', 1, ['users:read'])
    const res = await call(app, 'updateRole', admin.cred, {
      params: { id },
      body: {
        name: 'new-name',
        description: 'd',
        level: 7,
      },
    })
    t.equal(res.status, 200)
    t.match(res.data, { id, name: 'new-name', description: 'd', level: 7, permissions: ['users:read'] })
    const cleared = await call(app, 'updateRole', admin.cred, { params: { id }, body: { description: null } })
    t.equal(cleared.data.description, null)
  })

  t.test('200: a built-in role’s description may change', async (t) => {
    const { id } = await roleByName(app, tenant.id, 'user')
    const res = await call(app, 'updateRole', admin.cred, {
      params: { id },
      body: {
        description: 'Everyone',
        name: 'user',
      },
    })
    t.equal(res.status, 200)
    t.equal(res.data.description, 'Everyone')
  })

  t.test('400 VALIDATION_ERROR for an empty body, unknown properties, a bad level', async (t) => {
    const id = await insertRole(app, tenant, 'v1', 1)
    for (const body of [{}, { permissions: [] }, { level: 2000 }, { level: '5' }]) {
      t.equal(
        (await call(app, 'updateRole', admin.cred, { params: { id }, body: unchecked(body) })).code,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      )
    }
  })

  t.test('403 FORBIDDEN without roles:update', async (t) => {
    const id = await insertRole(app, tenant, 'v2', 1)
    const key = await keyCred(app, tenant, ['roles:read', 'roles:create'])
    t.equal((await call(app, 'updateRole', key, { params: { id }, body: { level: 2 } })).code, 'FORBIDDEN')
  })

  t.test('404 ROLE_NOT_FOUND for an unknown id and another tenant’s role (unchanged)', async (t) => {
    t.equal(
      (await call(app, 'updateRole', admin.cred, { params: { id: UNKNOWN_ID }, body: { level: 2 } })).code,
      'ROLE_NOT_FOUND',
    )
    const res = await call(app, 'updateRole', admin.cred, { params: { id: foreignRole }, body: { level: 2 } })
    t.equal(res.status, 404)
    t.equal(res.code, 'ROLE_NOT_FOUND')
    t.equal((await roleByName(app, other.id, 'foreign')).level, 1)
  })

  t.test(
    '409: ROLE_ALREADY_EXISTS for a taken name; SYSTEM_RESOURCE_PROTECTED renaming or re-levelling a built-in',
    async (t) => {
      const id = await insertRole(app, tenant, 'v3', 1)
      const taken = await call(app, 'updateRole', admin.cred, { params: { id }, body: { name: 'admin' } })
      t.equal(taken.status, 409)
      t.equal(taken.code, 'ROLE_ALREADY_EXISTS')
      const adminRole = await roleByName(app, tenant.id, 'admin')
      const userRole = await roleByName(app, tenant.id, 'user')
      t.equal(
        (await call(app, 'updateRole', admin.cred, { params: { id: adminRole.id }, body: { name: 'boss' } }))
          .code,
        'SYSTEM_RESOURCE_PROTECTED',
      )
      t.equal(
        (await call(app, 'updateRole', admin.cred, { params: { id: userRole.id }, body: { level: 5 } })).code,
        'SYSTEM_RESOURCE_PROTECTED',
      )
      t.equal((await roleByName(app, tenant.id, 'admin')).name, 'admin')
    },
  )

  t.test(
    'hierarchy: 403 editing a role above one’s rank, lifting one above it, or holding what one lacks',
    async (t) => {
      await insertRole(app, tenant, 'editor-boss', 40, ['roles:update', 'users:read'])
      const editor = await userWithToken(app, tenant, { roles: ['editor-boss'] })
      const high = await insertRole(app, tenant, 'high', 60)
      t.equal(
        (await call(app, 'updateRole', editor.cred, { params: { id: high }, body: { description: 'x' } }))
          .code,
        'ROLE_HIERARCHY_VIOLATION',
      )
      const low = await insertRole(app, tenant, 'low', 10, ['users:read'])
      t.equal(
        (await call(app, 'updateRole', editor.cred, { params: { id: low }, body: { level: 41 } })).code,
        'ROLE_HIERARCHY_VIOLATION',
      )
      t.equal(
        (await call(app, 'updateRole', editor.cred, { params: { id: low }, body: { level: 40 } })).status,
        200,
      )
      const rich = await insertRole(app, tenant, 'rich', 5, ['users:delete'])
      t.equal(
        (await call(app, 'updateRole', editor.cred, { params: { id: rich }, body: { description: 'y' } }))
          .code,
        'ROLE_HIERARCHY_VIOLATION',
      )
    },
  )
})

t.test('deleteRole: DELETE /roles/:id', async (t) => {
  const { tenant, admin } = await tenantWithAdmin()
  const other = await createTenant(app)
  const foreignRole = await insertRole(app, other, 'foreign', 1)

  t.test('200 {id, deleted}: the role and its assignments go', async (t) => {
    const id = await insertRole(app, tenant, 'temp', 1, ['users:read'])
    const holder = await userWithToken(app, tenant, { roles: ['temp', 'user'] })
    const res = await call(app, 'deleteRole', admin.cred, { params: { id } })
    t.equal(res.status, 200)
    t.same(res.data, { id, deleted: true })
    const user = await call(app, 'getUser', admin.cred, { params: { userId: holder.id } })
    t.same(user.data.roles, ['user'])
    t.equal((await call(app, 'getRole', admin.cred, { params: { id } })).code, 'ROLE_NOT_FOUND')
  })

  t.test('400 VALIDATION_ERROR for a non-UUID id', async (t) => {
    t.equal((await call(app, 'deleteRole', admin.cred, { params: { id: 'abc' } })).code, 'VALIDATION_ERROR')
  })

  t.test('403 FORBIDDEN without roles:delete', async (t) => {
    const id = await insertRole(app, tenant, 'keep', 1)
    const key = await keyCred(app, tenant, ['roles:update'])
    t.equal((await call(app, 'deleteRole', key, { params: { id } })).code, 'FORBIDDEN')
  })

  t.test('404 ROLE_NOT_FOUND for an unknown id and another tenant’s role (which survives)', async (t) => {
    t.equal(
      (await call(app, 'deleteRole', admin.cred, { params: { id: UNKNOWN_ID } })).code,
      'ROLE_NOT_FOUND',
    )
    t.equal(
      (await call(app, 'deleteRole', admin.cred, { params: { id: foreignRole } })).code,
      'ROLE_NOT_FOUND',
    )
    t.ok(await roleByName(app, other.id, 'foreign'))
  })

  t.test('409 SYSTEM_RESOURCE_PROTECTED for admin and user', async (t) => {
    for (const name of ['admin', 'user']) {
      const { id } = await roleByName(app, tenant.id, name)
      const res = await call(app, 'deleteRole', admin.cred, { params: { id } })
      t.equal(res.status, 409)
      t.equal(res.code, 'SYSTEM_RESOURCE_PROTECTED')
    }
  })

  t.test('403 ROLE_HIERARCHY_VIOLATION deleting a role above the caller’s rank', async (t) => {
    await insertRole(app, tenant, 'deleter', 30, ['roles:delete'])
    const deleter = await userWithToken(app, tenant, { roles: ['deleter'] })
    const high = await insertRole(app, tenant, 'higher', 31)
    t.equal(
      (await call(app, 'deleteRole', deleter.cred, { params: { id: high } })).code,
      'ROLE_HIERARCHY_VIOLATION',
    )
    const low = await insertRole(app, tenant, 'lower', 30)
    t.equal((await call(app, 'deleteRole', deleter.cred, { params: { id: low } })).status, 200)
  })
})

t.test('addRolePermissions, removeRolePermissions: POST and DELETE /roles/:id/permissions', async (t) => {
  const { tenant, admin: creator } = await tenantWithAdmin()
  const other = await createTenant(app)
  const foreignRole = await insertRole(app, other, 'foreign', 1)
  await call(app, 'createPermission', creator.cred, { body: { name: 'invoices:approve' } })
  // Why a new token: containment uses the claims as issued, and the creator's predate invoices:approve.
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })

  t.test(
    'addRolePermissions, removeRolePermissions: 200, adds (keeping what it has) and removes permissions; returns the role',
    async (t) => {
      const id = await insertRole(app, tenant, 'clerk', 5, ['users:read'])
      const add = await call(app, 'addRolePermissions', admin.cred, {
        params: { id },
        body: {
          permissions: ['users:read', 'invoices:approve', 'invoices:*'],
        },
      })
      t.equal(add.status, 200)
      t.same(add.data.permissions, ['invoices:*', 'invoices:approve', 'users:read'])
      const del = await call(app, 'removeRolePermissions', admin.cred, {
        params: { id },
        body: {
          permissions: ['invoices:*', 'roles:read'],
        },
      })
      t.equal(del.status, 200)
      t.same(del.data.permissions, ['invoices:approve', 'users:read'], 'one it did not have is ignored')
      t.same(
        (await call(app, 'getRolePermissions', admin.cred, { params: { id } })).data.permissions,
        del.data.permissions,
      )
    },
  )

  t.test(
    'addRolePermissions, removeRolePermissions: 200 adding to the built-in admin changes nothing; 409 removing from it',
    async (t) => {
      const { id } = await roleByName(app, tenant.id, 'admin')
      const before = (await call(app, 'getRole', admin.cred, { params: { id } })).data.permissions
      const add = await call(app, 'addRolePermissions', admin.cred, {
        params: { id },
        body: {
          permissions: ['users:read'],
        },
      })
      t.equal(add.status, 200)
      t.same(add.data.permissions, before)
      const del = await call(app, 'removeRolePermissions', admin.cred, {
        params: { id },
        body: {
          permissions: ['users:read'],
        },
      })
      t.equal(del.status, 409)
      t.equal(del.code, 'SYSTEM_RESOURCE_PROTECTED')
    },
  )

  t.test('addRolePermissions: 200, the built-in user role can be given permissions', async (t) => {
    const { id } = await roleByName(app, tenant.id, 'user')
    const res = await call(app, 'addRolePermissions', admin.cred, {
      params: { id },
      body: {
        permissions: ['users:read'],
      },
    })
    t.same(res.data.permissions, ['users:read'])
    await call(app, 'removeRolePermissions', admin.cred, {
      params: { id },
      body: { permissions: ['users:read'] },
    })
  })

  t.test(
    'addRolePermissions, removeRolePermissions: 400 VALIDATION_ERROR for an empty list, a bad name, a missing body',
    async (t) => {
      const id = await insertRole(app, tenant, 'v', 1)
      for (const body of [{ permissions: [] }, { permissions: ['nocolon'] }, {}]) {
        t.equal(
          (await call(app, 'addRolePermissions', admin.cred, { params: { id }, body: unchecked(body) })).code,
          'VALIDATION_ERROR',
        )
        t.equal(
          (await call(app, 'removeRolePermissions', admin.cred, { params: { id }, body: unchecked(body) }))
            .code,
          'VALIDATION_ERROR',
        )
      }
    },
  )

  t.test(
    'addRolePermissions, removeRolePermissions: 403 FORBIDDEN without roles:update; and for admin:* outside the platform tenant',
    async (t) => {
      const id = await insertRole(app, tenant, 'w', 1)
      const key = await keyCred(app, tenant, ['roles:read'])
      t.equal(
        (
          await call(app, 'addRolePermissions', key, {
            params: { id },
            body: { permissions: ['users:read'] },
          })
        ).code,
        'FORBIDDEN',
      )
      t.equal(
        (
          await call(app, 'removeRolePermissions', key, {
            params: { id },
            body: { permissions: ['users:read'] },
          })
        ).code,
        'FORBIDDEN',
      )
      const res = await call(app, 'addRolePermissions', admin.cred, {
        params: { id },
        body: {
          permissions: ['admin:*'],
        },
      })
      t.equal(res.status, 403)
      t.equal(res.code, 'FORBIDDEN')
    },
  )

  t.test(
    'addRolePermissions, removeRolePermissions: 404 ROLE_NOT_FOUND for unknown and cross-tenant roles; PERMISSION_NOT_FOUND for unknown names',
    async (t) => {
      for (const id of [UNKNOWN_ID, foreignRole]) {
        t.equal(
          (
            await call(app, 'addRolePermissions', admin.cred, {
              params: { id },
              body: {
                permissions: ['users:read'],
              },
            })
          ).code,
          'ROLE_NOT_FOUND',
        )
        t.equal(
          (
            await call(app, 'removeRolePermissions', admin.cred, {
              params: { id },
              body: {
                permissions: ['users:read'],
              },
            })
          ).code,
          'ROLE_NOT_FOUND',
        )
      }
      const id = await insertRole(app, tenant, 'x', 1)
      for (const p of ['users:fly', 'ghosts:*']) {
        t.equal(
          (await call(app, 'addRolePermissions', admin.cred, { params: { id }, body: { permissions: [p] } }))
            .code,
          'PERMISSION_NOT_FOUND',
        )
        t.equal(
          (
            await call(app, 'removeRolePermissions', admin.cred, {
              params: { id },
              body: { permissions: [p] },
            })
          ).code,
          'PERMISSION_NOT_FOUND',
        )
      }
    },
  )

  t.test(
    'addRolePermissions, removeRolePermissions: hierarchy, a permission the caller lacks, a role above its level; a key beyond its scopes',
    async (t) => {
      await insertRole(app, tenant, 'role-editor', 20, ['roles:update', 'users:read', 'users:update'])
      const editor = await userWithToken(app, tenant, { roles: ['role-editor'] })
      const mine = await insertRole(app, tenant, 'mine', 10, ['users:read'])
      const lacks = await call(app, 'addRolePermissions', editor.cred, {
        params: { id: mine },
        body: {
          permissions: ['users:delete'],
        },
      })
      t.equal(lacks.code, 'ROLE_HIERARCHY_VIOLATION')
      t.equal(
        (
          await call(app, 'addRolePermissions', editor.cred, {
            params: { id: mine },
            body: {
              permissions: ['users:update'],
            },
          })
        ).status,
        200,
      )
      const above = await insertRole(app, tenant, 'above', 21)
      t.equal(
        (
          await call(app, 'addRolePermissions', editor.cred, {
            params: { id: above },
            body: {
              permissions: ['users:read'],
            },
          })
        ).code,
        'ROLE_HIERARCHY_VIOLATION',
      )
      const keeps = await insertRole(app, tenant, 'keeps', 1, ['users:read', 'users:delete'])
      t.equal(
        (
          await call(app, 'removeRolePermissions', editor.cred, {
            params: { id: keeps },
            body: {
              permissions: ['users:read'],
            },
          })
        ).code,
        'ROLE_HIERARCHY_VIOLATION',
        'the role keeps users:delete, which the caller lacks',
      )
      const key = await keyCred(app, tenant, ['roles:update', 'users:read'])
      t.equal(
        (
          await call(app, 'addRolePermissions', key, {
            params: { id: mine },
            body: { permissions: ['users:read'] },
          })
        ).code,
        'ROLE_HIERARCHY_VIOLATION',
        'the role holds users:update, outside the key’s scopes',
      )
    },
  )
})
