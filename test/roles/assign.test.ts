import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { byUser, matchOne } from '../helpers/audit.js'
import {
  auditRows,
  createTenant,
  createUser,
  insertRole,
  keyCred,
  platformTenant,
  roleByName,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, unchecked, type BodyOf } from '../helpers/call.js'

const app = await buildTestApp(t)

const rowsFor = async (tenantId: string, action: 'ROLE_ASSIGN' | 'ROLE_REMOVE', userId: string | null) =>
  (await auditRows(app, tenantId, action)).filter((r) => r.user_id === userId)

t.test('assignRole: POST /roles/assign', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const editorId = await insertRole(app, tenant, 'editor', 10, ['users:read'])
  const foreignRole = await insertRole(app, other, 'editor', 10)
  const foreignUser = await createUser(app, other)

  t.test('200 by roleId and by roleName, {userId, roles}; a ROLE_ASSIGN success row each', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const byId = await call(app, 'assignRole', admin.cred, {
      body: {
        userId: u.id,
        roleId: editorId,
      },
    })
    t.equal(byId.status, 200)
    t.same(byId.data, { userId: u.id, roles: ['editor', 'user'] })
    const v = await createUser(app, tenant)
    const byName = await call(app, 'assignRole', admin.cred, {
      body: {
        userId: v.id,
        roleName: 'editor',
      },
    })
    t.same(byName.data, { userId: v.id, roles: ['editor'] })
    for (const id of [u.id, v.id]) {
      matchOne(t, await rowsFor(tenant.id, 'ROLE_ASSIGN', id), {
        success: true,
        error_message: null,
        ...byUser(admin.id),
        metadata: { role: 'editor' },
      })
    }
  })

  t.test('200 no-op assigning a role the user already holds', async (t) => {
    const u = await createUser(app, tenant, { roles: ['editor'] })
    const res = await call(app, 'assignRole', admin.cred, {
      body: {
        userId: u.id,
        roleName: 'editor',
      },
    })
    t.equal(res.status, 200)
    t.same(res.data.roles, ['editor'])
  })

  t.test('400 VALIDATION_ERROR without a role, with both roleId and roleName, or a bad userId', async (t) => {
    const u = await createUser(app, tenant)
    for (const body of [
      { userId: u.id },
      { userId: u.id, roleId: editorId, roleName: 'editor' },
      { userId: 'nope', roleName: 'editor' },
      { roleName: 'editor' },
    ]) {
      t.equal(
        (await call(app, 'assignRole', admin.cred, { body: unchecked(body) })).code,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      )
    }
  })

  t.test('403 FORBIDDEN without roles:assign (refused before the handler: no row)', async (t) => {
    const u = await createUser(app, tenant)
    const key = await keyCred(app, tenant, ['roles:revoke', 'users:read'])
    t.equal(
      (await call(app, 'assignRole', key, { body: { userId: u.id, roleName: 'user' } })).code,
      'FORBIDDEN',
    )
    t.equal((await rowsFor(tenant.id, 'ROLE_ASSIGN', u.id)).length, 0)
  })

  t.test(
    '404 USER_NOT_FOUND / ROLE_NOT_FOUND, cross-tenant ids included, each with a failure row',
    async (t) => {
      const u = await createUser(app, tenant)
      const before = (await auditRows(app, tenant.id, 'ROLE_ASSIGN')).length
      const cases: [BodyOf<'assignRole'>, string][] = [
        [{ userId: UNKNOWN_ID, roleName: 'editor' }, 'USER_NOT_FOUND'],
        [{ userId: foreignUser.id, roleName: 'editor' }, 'USER_NOT_FOUND'],
        [{ userId: u.id, roleName: 'ghost' }, 'ROLE_NOT_FOUND'],
        [{ userId: u.id, roleId: UNKNOWN_ID }, 'ROLE_NOT_FOUND'],
        [{ userId: u.id, roleId: foreignRole }, 'ROLE_NOT_FOUND'],
      ]
      for (const [body, code] of cases) {
        const res = await call(app, 'assignRole', admin.cred, { body })
        t.equal(res.status, 404)
        t.equal(res.code, code, JSON.stringify(body))
      }
      const rows = (await auditRows(app, tenant.id, 'ROLE_ASSIGN')).slice(before)
      t.equal(rows.length, cases.length)
      t.ok(rows.every((r) => !r.success))
      t.same(
        rows.map((r) => r.error_message),
        cases.map(([, code]) => code),
      )
      t.same(
        rows.map((r) => r.user_id),
        [null, null, u.id, u.id, u.id],
        'user_id only for a user of this tenant',
      )
      t.equal((await rowsFor(other.id, 'ROLE_ASSIGN', foreignUser.id)).length, 0)
      const foreignRoles = await app.ctx.dbs
        .forTenant(other.id)
        .selectFrom('user_roles')
        .select('role_id')
        .where('user_id', '=', foreignUser.id)
        .execute()
      t.same(foreignRoles, [], 'another tenant’s user got nothing')
    },
  )

  t.test('hierarchy: 403 assigning a role above the caller’s level, with a failure row', async (t) => {
    await insertRole(app, tenant, 'lead', 30, ['roles:assign', 'users:read'])
    await insertRole(app, tenant, 'director', 31, ['users:read'])
    const lead = await userWithToken(app, tenant, { roles: ['lead'] })
    const u = await createUser(app, tenant)
    const res = await call(app, 'assignRole', lead.cred, {
      body: {
        userId: u.id,
        roleName: 'director',
      },
    })
    t.equal(res.status, 403)
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    const rows = await rowsFor(tenant.id, 'ROLE_ASSIGN', u.id)
    t.match(rows, [
      { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION', metadata: { role: 'director' } },
    ])
    const ok = await call(app, 'assignRole', lead.cred, { body: { userId: u.id, roleName: 'lead' } })
    t.equal(ok.status, 200, 'a role at its own level is fine')
  })

  t.test('hierarchy: 403 assigning a role carrying a permission the caller lacks', async (t) => {
    await insertRole(app, tenant, 'assigner', 50, ['roles:assign'])
    await insertRole(app, tenant, 'reader', 1, ['users:read'])
    const assigner = await userWithToken(app, tenant, { roles: ['assigner'] })
    const u = await createUser(app, tenant)
    const res = await call(app, 'assignRole', assigner.cred, {
      body: {
        userId: u.id,
        roleName: 'reader',
      },
    })
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    t.match(await rowsFor(tenant.id, 'ROLE_ASSIGN', u.id), [{ success: false }])
  })

  t.test(
    'hierarchy: rank reads the caller’s roles as stored now, containment the token’s claims as issued',
    async (t) => {
      const db = app.ctx.dbs.forTenant(tenant.id)
      const u = await createUser(app, tenant)
      const risingId = await insertRole(app, tenant, 'rising', 5, ['roles:assign', 'users:read'])
      const riser = await userWithToken(app, tenant, { roles: ['rising'] })
      t.equal(
        (await call(app, 'assignRole', riser.cred, { body: { userId: u.id, roleName: 'editor' } })).code,
        'ROLE_HIERARCHY_VIOLATION',
      )
      await db.updateTable('roles').set({ level: 10 }).where('id', '=', risingId).execute()
      const now = await call(app, 'assignRole', riser.cred, {
        body: {
          userId: u.id,
          roleName: 'editor',
        },
      })
      t.equal(now.status, 200, 'the same token, but the stored rank rose to 10')
      await insertRole(app, tenant, 'purger', 1, ['users:delete'])
      const del = await db
        .selectFrom('permissions')
        .select('id')
        .where('name', '=', 'users:delete')
        .executeTakeFirstOrThrow()
      await db
        .insertInto('role_permissions')
        .values({ tenant_id: tenant.id, role_id: risingId, permission_id: del.id })
        .execute()
      t.equal(
        (await call(app, 'assignRole', riser.cred, { body: { userId: u.id, roleName: 'purger' } })).code,
        'ROLE_HIERARCHY_VIOLATION',
        'the stored role now holds users:delete, the token does not',
      )
      const fresh = await userWithToken(app, tenant, { roles: ['rising'] })
      t.equal(
        (await call(app, 'assignRole', fresh.cred, { body: { userId: u.id, roleName: 'purger' } })).status,
        200,
      )
    },
  )

  t.test('Client Key: 403 when the target’s permissions are not all within its scopes', async (t) => {
    const key = await keyCred(app, tenant, ['roles:assign', 'users:read'])
    const strong = await createUser(app, tenant, { permissions: ['users:delete'] })
    const res = await call(app, 'assignRole', key, {
      body: {
        userId: strong.id,
        roleName: 'editor',
      },
    })
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    t.match(await rowsFor(tenant.id, 'ROLE_ASSIGN', strong.id), [
      { success: false, actor_type: 'client_key' },
    ])
    const weak = await createUser(app, tenant, { roles: ['user'] })
    const ok = await call(app, 'assignRole', key, { body: { userId: weak.id, roleName: 'editor' } })
    t.equal(ok.status, 200)
    const big = await insertRole(app, tenant, 'big', 0, ['roles:read'])
    t.ok(big)
    t.equal(
      (await call(app, 'assignRole', key, { body: { userId: weak.id, roleName: 'big' } })).code,
      'ROLE_HIERARCHY_VIOLATION',
      'a role carrying a permission outside the key’s scopes',
    )
  })

  t.test(
    'admin:* exempt: a platform admin assigns admin to a platform user; FORBIDDEN never applies there',
    async (t) => {
      const platform = await platformTenant(app)
      const root = await userWithToken(app, platform, { roles: ['admin'] })
      await insertRole(app, platform, 'summit', 1000)
      const peer = await createUser(app, platform, { roles: ['admin'] })
      const res = await call(app, 'assignRole', root.cred, {
        body: {
          userId: peer.id,
          roleName: 'summit',
        },
      })
      t.equal(res.status, 200)
      t.same(res.data.roles, ['admin', 'summit'])
    },
  )
})

t.test('removeRole: POST /roles/remove', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  await insertRole(app, tenant, 'editor', 10, ['users:read'])
  const foreignUser = await createUser(app, other, { roles: ['user'] })
  const foreignRole = await roleByName(app, other.id, 'user')

  t.test('200 {userId, roles} by name and by id; a ROLE_REMOVE success row', async (t) => {
    const u = await createUser(app, tenant, { roles: ['editor', 'user'] })
    const res = await call(app, 'removeRole', admin.cred, {
      body: {
        userId: u.id,
        roleName: 'editor',
      },
    })
    t.equal(res.status, 200)
    t.same(res.data, { userId: u.id, roles: ['user'] })
    const { id } = await roleByName(app, tenant.id, 'user')
    const byId = await call(app, 'removeRole', admin.cred, { body: { userId: u.id, roleId: id } })
    t.same(byId.data.roles, [])
    const rows = await rowsFor(tenant.id, 'ROLE_REMOVE', u.id)
    t.match(rows, [
      { success: true, metadata: { role: 'editor' }, actor_id: admin.id },
      { success: true, metadata: { role: 'user' } },
    ])
  })

  t.test('200 no-op removing a role the user does not hold', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const res = await call(app, 'removeRole', admin.cred, {
      body: {
        userId: u.id,
        roleName: 'editor',
      },
    })
    t.equal(res.status, 200)
    t.same(res.data.roles, ['user'])
  })

  t.test('400 VALIDATION_ERROR for a body of the wrong shape', async (t) => {
    t.equal(
      (await call(app, 'removeRole', admin.cred, { body: { userId: UNKNOWN_ID } })).code,
      'VALIDATION_ERROR',
    )
    t.equal(
      (
        await call(app, 'removeRole', admin.cred, {
          body: unchecked({
            userId: UNKNOWN_ID,
            roleName: 'x',
            extra: 1,
          }),
        })
      ).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without roles:revoke', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const key = await keyCred(app, tenant, ['roles:assign'])
    t.equal(
      (await call(app, 'removeRole', key, { body: { userId: u.id, roleName: 'user' } })).code,
      'FORBIDDEN',
    )
  })

  t.test(
    '404 for unknown and cross-tenant user and role ids, with failure rows; nothing changes there',
    async (t) => {
      const u = await createUser(app, tenant, { roles: ['user'] })
      const before = (await auditRows(app, tenant.id, 'ROLE_REMOVE')).length
      const cases: [BodyOf<'removeRole'>, string][] = [
        [{ userId: foreignUser.id, roleName: 'user' }, 'USER_NOT_FOUND'],
        [{ userId: UNKNOWN_ID, roleName: 'user' }, 'USER_NOT_FOUND'],
        [{ userId: u.id, roleId: foreignRole.id }, 'ROLE_NOT_FOUND'],
        [{ userId: u.id, roleName: 'ghost' }, 'ROLE_NOT_FOUND'],
      ]
      for (const [body, code] of cases) {
        t.equal((await call(app, 'removeRole', admin.cred, { body })).code, code, JSON.stringify(body))
      }
      const rows = (await auditRows(app, tenant.id, 'ROLE_REMOVE')).slice(before)
      t.same(
        rows.map((r) => [r.success, r.error_message]),
        [
          [false, 'USER_NOT_FOUND'],
          [false, 'USER_NOT_FOUND'],
          [false, 'ROLE_NOT_FOUND'],
          [false, 'ROLE_NOT_FOUND'],
        ],
      )
      const still = await call(app, 'getUser', await keyCred(app, other, ['users:read']), {
        params: { userId: foreignUser.id },
      })
      t.same(still.data.roles, ['user'])
    },
  )

  t.test(
    'hierarchy: 403 removing a role from a peer, with a failure row; 200 from a user ranked below',
    async (t) => {
      const peer = await createUser(app, tenant, { roles: ['admin'] })
      const res = await call(app, 'removeRole', admin.cred, {
        body: {
          userId: peer.id,
          roleName: 'admin',
        },
      })
      t.equal(res.status, 403)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      t.match(await rowsFor(tenant.id, 'ROLE_REMOVE', peer.id), [
        { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION', metadata: { role: 'admin' } },
      ])
      const below = await createUser(app, tenant, { roles: ['editor'] })
      t.equal(
        (
          await call(app, 'removeRole', admin.cred, {
            body: {
              userId: below.id,
              roleName: 'editor',
            },
          })
        ).status,
        200,
      )
    },
  )

  t.test('hierarchy: a user may always remove its own roles', async (t) => {
    await insertRole(app, tenant, 'self-service', 3, ['roles:revoke'])
    const me = await userWithToken(app, tenant, { roles: ['self-service', 'editor'] })
    const res = await call(app, 'removeRole', me.cred, {
      body: {
        userId: me.id,
        roleName: 'editor',
      },
    })
    t.equal(res.status, 200)
    t.same(res.data.roles, ['self-service'])
  })

  t.test('Client Key: 403 for a target beyond its scopes, 200 within', async (t) => {
    const key = await keyCred(app, tenant, ['roles:revoke', 'users:read'])
    const beyond = await createUser(app, tenant, { roles: ['admin'] })
    t.equal(
      (await call(app, 'removeRole', key, { body: { userId: beyond.id, roleName: 'admin' } })).code,
      'ROLE_HIERARCHY_VIOLATION',
    )
    t.match(await rowsFor(tenant.id, 'ROLE_REMOVE', beyond.id), [
      { success: false, actor_type: 'client_key' },
    ])
    const within = await createUser(app, tenant, { roles: ['editor'] })
    t.equal(
      (await call(app, 'removeRole', key, { body: { userId: within.id, roleName: 'editor' } })).status,
      200,
    )
  })

  t.test('admin:* exempt: a platform admin removes a role from a platform peer', async (t) => {
    const platform = await platformTenant(app)
    const root = await userWithToken(app, platform, { roles: ['admin'] })
    const peer = await createUser(app, platform, { roles: ['admin', 'user'] })
    const res = await call(app, 'removeRole', root.cred, {
      body: {
        userId: peer.id,
        roleName: 'admin',
      },
    })
    t.equal(res.status, 200)
    t.same(res.data.roles, ['user'])
  })
})
