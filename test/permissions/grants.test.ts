import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { byUser } from '../helpers/audit.js'
import {
  auditRows,
  createTenant,
  createUser,
  insertRole,
  keyCred,
  platformTenant,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, loginAs, refresh, unchecked, type As, type BodyOf } from '../helpers/call.js'

const app = await buildTestApp(t)

const rowsFor = async (
  tenantId: string,
  action: 'PERMISSION_GRANT' | 'PERMISSION_REVOKE',
  userId: string | null,
) => (await auditRows(app, tenantId, action)).filter((r) => r.user_id === userId)

/** grantPermission of one permission to one user. */
const grant = (as: As, userId: string, permission: string) =>
  call(app, 'grantPermission', as, { body: { userId, permission } })

/** revokePermission of one permission from one user. */
const revoke = (as: As, userId: string, permission: string) =>
  call(app, 'revokePermission', as, { body: { userId, permission } })

t.test('grantPermission: POST /permissions/grant', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const otherAdmin = await userWithToken(app, other, { roles: ['admin'] })
  await call(app, 'createPermission', otherAdmin.cred, { body: { name: 'secret:peek' } })
  const foreignUser = await createUser(app, other)

  t.test('200: the user’s permissions after the change; a PERMISSION_GRANT success row', async (t) => {
    const u = await createUser(app, tenant, { roles: ['user'] })
    const res = await grant(admin.cred, u.id, 'users:read')
    t.equal(res.status, 200)
    t.same(res.data, {
      userId: u.id,
      direct: ['users:read'],
      fromRoles: [{ role: 'user', permissions: [] }],
      effective: ['users:read'],
    })
    const again = await grant(admin.cred, u.id, 'users:read')
    t.same(again.data.direct, ['users:read'], 'granting it twice keeps one grant')
    const rows = await rowsFor(tenant.id, 'PERMISSION_GRANT', u.id)
    t.equal(rows.length, 2)
    t.match(rows[0], {
      success: true,
      error_message: null,
      ...byUser(admin.id),
      metadata: { permission: 'users:read' },
    })
  })

  t.test('200: a wildcard of a resource that has permissions', async (t) => {
    const u = await createUser(app, tenant)
    const res = await grant(admin.cred, u.id, 'users:*')
    t.equal(res.status, 200)
    t.same(res.data.effective, ['users:*'])
  })

  t.test('400 VALIDATION_ERROR for a bad shape (no audit row: refused before the handler)', async (t) => {
    const u = await createUser(app, tenant)
    for (const body of [
      { userId: u.id },
      { userId: u.id, permission: 'bad' },
      { userId: 'x', permission: 'users:read' },
      { userId: u.id, permission: 'users:read', extra: true },
    ]) {
      t.equal(
        (await call(app, 'grantPermission', admin.cred, { body: unchecked(body) })).code,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      )
    }
    t.equal((await rowsFor(tenant.id, 'PERMISSION_GRANT', u.id)).length, 0)
  })

  t.test('403 FORBIDDEN without permissions:grant', async (t) => {
    const u = await createUser(app, tenant)
    const key = await keyCred(app, tenant, ['permissions:revoke', 'users:read'])
    t.equal((await grant(key, u.id, 'users:read')).code, 'FORBIDDEN')
  })

  t.test('403 FORBIDDEN for admin:* outside the platform tenant, with a failure row', async (t) => {
    const u = await createUser(app, tenant)
    const res = await grant(admin.cred, u.id, 'admin:*')
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    t.match(await rowsFor(tenant.id, 'PERMISSION_GRANT', u.id), [
      { success: false, error_message: 'FORBIDDEN', metadata: { permission: 'admin:*' } },
    ])
  })

  t.test(
    '404: USER_NOT_FOUND (unknown, other tenant), PERMISSION_NOT_FOUND (unknown, other tenant’s, unbacked wildcard)',
    async (t) => {
      const u = await createUser(app, tenant)
      const before = (await auditRows(app, tenant.id, 'PERMISSION_GRANT')).length
      const cases: [BodyOf<'grantPermission'>, string][] = [
        [{ userId: UNKNOWN_ID, permission: 'users:read' }, 'USER_NOT_FOUND'],
        [{ userId: foreignUser.id, permission: 'users:read' }, 'USER_NOT_FOUND'],
        [{ userId: u.id, permission: 'users:fly' }, 'PERMISSION_NOT_FOUND'],
        [{ userId: u.id, permission: 'secret:peek' }, 'PERMISSION_NOT_FOUND'],
        [{ userId: u.id, permission: 'secret:*' }, 'PERMISSION_NOT_FOUND'],
      ]
      for (const [body, code] of cases) {
        const res = await call(app, 'grantPermission', admin.cred, { body })
        t.equal(res.status, 404)
        t.equal(res.code, code, JSON.stringify(body))
      }
      const rows = (await auditRows(app, tenant.id, 'PERMISSION_GRANT')).slice(before)
      t.same(
        rows.map((r) => [r.success, r.error_message, r.user_id]),
        cases.map(([, code], i) => [false, code, i < 2 ? null : u.id]),
      )
      const theirs = await call(app, 'getUserPermissions', otherAdmin.cred, {
        params: { userId: foreignUser.id },
      })
      t.same(theirs.data.direct, [], 'the other tenant’s user got nothing')
    },
  )

  t.test('hierarchy: 403 granting what the caller lacks, or to a peer; failure rows', async (t) => {
    await insertRole(app, tenant, 'granter', 20, ['permissions:grant', 'users:read'])
    const granter = await userWithToken(app, tenant, { roles: ['granter'] })
    const low = await createUser(app, tenant, { roles: ['user'] })
    const lacks = await grant(granter.cred, low.id, 'users:delete')
    t.equal(lacks.status, 403)
    t.equal(lacks.code, 'ROLE_HIERARCHY_VIOLATION')
    const peer = await createUser(app, tenant, { roles: ['granter'] })
    const toPeer = await grant(granter.cred, peer.id, 'users:read')
    t.equal(toPeer.code, 'ROLE_HIERARCHY_VIOLATION')
    t.match(await rowsFor(tenant.id, 'PERMISSION_GRANT', low.id), [
      { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION' },
    ])
    t.match(await rowsFor(tenant.id, 'PERMISSION_GRANT', peer.id), [
      { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION' },
    ])
    const ok = await grant(granter.cred, low.id, 'users:read')
    t.equal(ok.status, 200)
  })

  t.test('hierarchy: a Client Key only on users whose permissions lie within its scopes', async (t) => {
    const key = await keyCred(app, tenant, ['permissions:grant', 'users:read', 'users:update'])
    const beyond = await createUser(app, tenant, { permissions: ['roles:read'] })
    const res = await grant(key, beyond.id, 'users:read')
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    t.match(await rowsFor(tenant.id, 'PERMISSION_GRANT', beyond.id), [
      { success: false, actor_type: 'client_key' },
    ])
    const within = await createUser(app, tenant, { roles: ['user'], permissions: ['users:read'] })
    t.equal((await grant(key, within.id, 'users:update')).status, 200)
    t.equal(
      (await grant(key, within.id, 'users:delete')).code,
      'ROLE_HIERARCHY_VIOLATION',
      'nor beyond its scopes',
    )
  })

  t.test('admin:* exempt and admin:* grantable in the platform tenant', async (t) => {
    const platform = await platformTenant(app)
    const root = await userWithToken(app, platform, { roles: ['admin'] })
    const peer = await createUser(app, platform, { roles: ['admin'] })
    const res = await grant(root.cred, peer.id, 'admin:*')
    t.equal(res.status, 200)
    t.same(res.data.direct, ['admin:*'])
  })
})

t.test('revokePermission: POST /permissions/revoke', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const foreignUser = await createUser(app, other, { permissions: ['users:read'] })

  t.test(
    '200: removes a direct grant, leaves role permissions; a PERMISSION_REVOKE success row',
    async (t) => {
      await insertRole(app, tenant, 'reader', 1, ['users:read'])
      const u = await createUser(app, tenant, {
        roles: ['reader'],
        permissions: ['users:read', 'roles:read'],
      })
      const res = await revoke(admin.cred, u.id, 'users:read')
      t.equal(res.status, 200)
      t.same(res.data, {
        userId: u.id,
        direct: ['roles:read'],
        fromRoles: [{ role: 'reader', permissions: ['users:read'] }],
        effective: ['roles:read', 'users:read'],
      })
      const noop = await revoke(admin.cred, u.id, 'users:read')
      t.equal(noop.status, 200, 'revoking a grant it lacks is a no-op')
      t.match(await rowsFor(tenant.id, 'PERMISSION_REVOKE', u.id), [
        { success: true, metadata: { permission: 'users:read' }, actor_id: admin.id },
        { success: true },
      ])
    },
  )

  t.test('400 VALIDATION_ERROR for a bad shape', async (t) => {
    t.equal(
      (await call(app, 'revokePermission', admin.cred, { body: unchecked({ permission: 'users:read' }) }))
        .code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without permissions:revoke', async (t) => {
    const u = await createUser(app, tenant, { permissions: ['users:read'] })
    const key = await keyCred(app, tenant, ['permissions:grant', 'users:read'])
    t.equal((await revoke(key, u.id, 'users:read')).code, 'FORBIDDEN')
  })

  t.test(
    '404 USER_NOT_FOUND for unknown and cross-tenant users; PERMISSION_NOT_FOUND for unknown names; rows',
    async (t) => {
      const u = await createUser(app, tenant)
      const before = (await auditRows(app, tenant.id, 'PERMISSION_REVOKE')).length
      const cases: [BodyOf<'revokePermission'>, string][] = [
        [{ userId: foreignUser.id, permission: 'users:read' }, 'USER_NOT_FOUND'],
        [{ userId: UNKNOWN_ID, permission: 'users:read' }, 'USER_NOT_FOUND'],
        [{ userId: u.id, permission: 'nope:nope' }, 'PERMISSION_NOT_FOUND'],
      ]
      for (const [body, code] of cases) {
        t.equal((await call(app, 'revokePermission', admin.cred, { body })).code, code, JSON.stringify(body))
      }
      const rows = (await auditRows(app, tenant.id, 'PERMISSION_REVOKE')).slice(before)
      t.same(
        rows.map((r) => [r.success, r.error_message]),
        [
          [false, 'USER_NOT_FOUND'],
          [false, 'USER_NOT_FOUND'],
          [false, 'PERMISSION_NOT_FOUND'],
        ],
      )
      const theirs = await call(app, 'getUserPermissions', await keyCred(app, other, ['permissions:read']), {
        params: { userId: foreignUser.id },
      })
      t.same(theirs.data.direct, ['users:read'], 'another tenant’s grant survives')
    },
  )

  t.test('hierarchy: 403 revoking from a peer (failure row); a key beyond its scopes', async (t) => {
    const peer = await createUser(app, tenant, { roles: ['admin'], permissions: ['users:read'] })
    const res = await revoke(admin.cred, peer.id, 'users:read')
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
    t.match(await rowsFor(tenant.id, 'PERMISSION_REVOKE', peer.id), [
      { success: false, error_message: 'ROLE_HIERARCHY_VIOLATION' },
    ])
    const key = await keyCred(app, tenant, ['permissions:revoke', 'users:read'])
    const beyond = await createUser(app, tenant, { permissions: ['users:read', 'roles:read'] })
    t.equal((await revoke(key, beyond.id, 'users:read')).code, 'ROLE_HIERARCHY_VIOLATION')
    const within = await createUser(app, tenant, { permissions: ['users:read'] })
    const ok = await revoke(key, within.id, 'users:read')
    t.same(ok.data.direct, [])
  })

  t.test('admin:* exempt: a platform admin revokes from a platform peer', async (t) => {
    const platform = await platformTenant(app)
    const root = await userWithToken(app, platform, { roles: ['admin'] })
    const peer = await createUser(app, platform, { roles: ['admin'], permissions: ['users:read'] })
    const res = await revoke(root.cred, peer.id, 'users:read')
    t.equal(res.status, 200)
    t.same(res.data.direct, [])
  })
})

t.test('getUserPermissions: GET /permissions/user/:userId', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const foreignUser = await createUser(app, other)

  t.test('200: direct, fromRoles and the de-duplicated effective union', async (t) => {
    await insertRole(app, tenant, 'a', 1, ['users:read', 'roles:read'])
    await insertRole(app, tenant, 'b', 2, ['users:read'])
    const u = await createUser(app, tenant, { roles: ['a', 'b'], permissions: ['roles:read', 'auth:logs'] })
    const res = await call(app, 'getUserPermissions', admin.cred, { params: { userId: u.id } })
    t.equal(res.status, 200)
    t.same(res.data.direct, ['auth:logs', 'roles:read'])
    t.same(
      [...res.data.fromRoles].sort((x: { role: string }, y: { role: string }) => (x.role < y.role ? -1 : 1)),
      [
        { role: 'a', permissions: ['roles:read', 'users:read'] },
        { role: 'b', permissions: ['users:read'] },
      ],
    )
    t.same(res.data.effective, ['auth:logs', 'roles:read', 'users:read'])
  })

  t.test('400 VALIDATION_ERROR for a non-UUID id', async (t) => {
    t.equal(
      (await call(app, 'getUserPermissions', admin.cred, { params: { userId: 'me' } })).code,
      'VALIDATION_ERROR',
    )
  })

  t.test('403 FORBIDDEN without permissions:read', async (t) => {
    const key = await keyCred(app, tenant, ['users:read'])
    t.equal((await call(app, 'getUserPermissions', key, { params: { userId: admin.id } })).code, 'FORBIDDEN')
  })

  t.test('404 USER_NOT_FOUND for an unknown id and another tenant’s user', async (t) => {
    t.equal(
      (await call(app, 'getUserPermissions', admin.cred, { params: { userId: UNKNOWN_ID } })).code,
      'USER_NOT_FOUND',
    )
    t.equal(
      (await call(app, 'getUserPermissions', admin.cred, { params: { userId: foreignUser.id } })).code,
      'USER_NOT_FOUND',
    )
  })
})

t.test('checkPermission: POST /permissions/check', async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const foreignUser = await createUser(app, other)
  await insertRole(app, tenant, 'reader', 1, ['users:read'])
  const reader = await userWithToken(app, tenant, { roles: ['reader'] })
  await grant(admin.cred, reader.id, 'roles:*')

  t.test('200: single form, for oneself; exact, r:* and a permission not held', async (t) => {
    for (const [permission, allowed] of [
      ['users:read', true],
      ['roles:assign', true],
      ['users:delete', false],
      ['admin:*', false],
    ] as const) {
      const res = await call(app, 'checkPermission', reader.cred, { body: { permission } })
      t.equal(res.status, 200)
      t.same(res.data, { allowed, userId: reader.id, permission }, permission)
    }
  })

  t.test('200: list form, all and any, with per-permission results', async (t) => {
    const all = await call(app, 'checkPermission', reader.cred, {
      body: { permissions: ['users:read', 'users:delete'], mode: 'all' },
    })
    t.same(all.data, {
      allowed: false,
      userId: reader.id,
      permissions: ['users:read', 'users:delete'],
      mode: 'all',
      results: { 'users:read': true, 'users:delete': false },
    })
    const any = await call(app, 'checkPermission', reader.cred, {
      body: { permissions: ['users:read', 'users:delete'], mode: 'any' },
    })
    t.equal(any.data.allowed, true)
    const allHeld = await call(app, 'checkPermission', reader.cred, {
      body: { permissions: ['users:read', 'roles:read'], mode: 'all' },
    })
    t.equal(allHeld.data.allowed, true)
  })

  t.test('200: another user with permissions:read; admin holds everything of its tenant', async (t) => {
    const res = await call(app, 'checkPermission', admin.cred, {
      body: { permission: 'users:delete', userId: reader.id },
    })
    t.same(res.data, { allowed: false, userId: reader.id, permission: 'users:delete' })
    const self = await call(app, 'checkPermission', admin.cred, {
      body: { permissions: ['roles:create', 'tenants:read'], mode: 'all' },
    })
    t.equal(self.data.allowed, true)
    const never = await call(app, 'checkPermission', admin.cred, { body: { permission: 'tenants:delete' } })
    t.equal(never.data.allowed, false, 'a tenant admin never holds tenants:delete')
  })

  t.test(
    '200: a Client Key checks its own scopes (userId null), or a user with permissions:read',
    async (t) => {
      const key = await keyCred(app, tenant, ['users:*'])
      const own = await call(app, 'checkPermission', key, { body: { permission: 'users:delete' } })
      t.same(own.data, { allowed: true, userId: null, permission: 'users:delete' })
      const reading = await keyCred(app, tenant, ['permissions:read'])
      const other = await call(app, 'checkPermission', reading, {
        body: { permission: 'users:read', userId: reader.id },
      })
      t.same(other.data, { allowed: true, userId: reader.id, permission: 'users:read' })
    },
  )

  t.test(
    '400 VALIDATION_ERROR: neither form, both forms, list without mode, bad names, extras',
    async (t) => {
      for (const body of [
        {},
        { userId: reader.id },
        { permission: 'users:read', permissions: ['users:read'], mode: 'all' },
        { permissions: ['users:read'] },
        { permissions: [], mode: 'all' },
        { permissions: ['users:read'], mode: 'most' },
        { permission: 'USERS' },
        { permission: 'users:read', extra: 1 },
      ]) {
        t.equal(
          (await call(app, 'checkPermission', reader.cred, { body: unchecked(body) })).code,
          'VALIDATION_ERROR',
          JSON.stringify(body),
        )
      }
    },
  )

  t.test('401 without a credential', async (t) => {
    t.equal((await call(app, 'checkPermission', null, { body: { permission: 'users:read' } })).status, 401)
  })

  t.test('403 FORBIDDEN checking another user without permissions:read (user or key)', async (t) => {
    const res = await call(app, 'checkPermission', reader.cred, {
      body: { permission: 'users:read', userId: admin.id },
    })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    const key = await keyCred(app, tenant, ['users:read'])
    t.equal(
      (await call(app, 'checkPermission', key, { body: { permission: 'users:read', userId: admin.id } }))
        .code,
      'FORBIDDEN',
    )
    const self = await call(app, 'checkPermission', reader.cred, {
      body: { permission: 'users:read', userId: reader.id },
    })
    t.equal(self.status, 200, 'naming oneself needs nothing')
  })

  t.test(
    '404: USER_NOT_FOUND for unknown and cross-tenant users; PERMISSION_NOT_FOUND for unknown names',
    async (t) => {
      t.equal(
        (
          await call(app, 'checkPermission', admin.cred, {
            body: { permission: 'users:read', userId: UNKNOWN_ID },
          })
        ).code,
        'USER_NOT_FOUND',
      )
      t.equal(
        (
          await call(app, 'checkPermission', admin.cred, {
            body: { permission: 'users:read', userId: foreignUser.id },
          })
        ).code,
        'USER_NOT_FOUND',
      )
      t.equal(
        (await call(app, 'checkPermission', admin.cred, { body: { permission: 'users:fly' } })).code,
        'PERMISSION_NOT_FOUND',
      )
      t.equal(
        (
          await call(app, 'checkPermission', admin.cred, {
            body: { permissions: ['users:read', 'ghosts:*'], mode: 'any' },
          })
        ).code,
        'PERMISSION_NOT_FOUND',
      )
    },
  )
})

t.test(
  'grantPermission, checkPermission: a grant is visible to /permissions/check at once; the old token’s claims stay until refresh',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const user = await createUser(app, tenant, { roles: ['user'] })
    const login = await loginAs(app, user)
    t.equal(login.status, 200)
    const old = { token: login.data.accessToken }
    const before = await call(app, 'checkPermission', old, { body: { permission: 'users:read' } })
    t.equal(before.data.allowed, false)

    const granted = await grant(admin.cred, user.id, 'users:read')
    t.equal(granted.status, 200)

    const after = await call(app, 'checkPermission', old, { body: { permission: 'users:read' } })
    t.equal(after.data.allowed, true, 'check reads the database: allowed at once, with the old token')
    const viaAdmin = await call(app, 'checkPermission', admin.cred, {
      body: { permission: 'users:read', userId: user.id },
    })
    t.equal(viaAdmin.data.allowed, true)
    const me = await call(app, 'getMe', old)
    t.ok(me.data.permissions.includes('users:read'), '/me reads the database too')

    const claims = await call(app, 'validateToken', old, { body: {} })
    t.equal(claims.status, 200)
    t.notOk(claims.data.claims.permissions.includes('users:read'), 'the old token’s claims are as issued')
    t.equal((await call(app, 'listUsers', old)).code, 'FORBIDDEN', 'endpoint access follows the claims')

    const refreshed = await refresh(app, login.data.refreshToken)
    t.equal(refreshed.status, 200)
    const fresh = { token: refreshed.data.accessToken as string }
    const newClaims = await call(app, 'validateToken', fresh, { body: {} })
    t.ok(newClaims.data.claims.permissions.includes('users:read'), 'a newly issued token carries the grant')
    t.equal((await call(app, 'listUsers', fresh)).status, 200)

    const revoked = await revoke(admin.cred, user.id, 'users:read')
    t.equal(revoked.status, 200)
    t.equal(
      (await call(app, 'checkPermission', fresh, { body: { permission: 'users:read' } })).data.allowed,
      false,
    )
    t.ok(
      (await call(app, 'validateToken', fresh, { body: {} })).data.claims.permissions.includes('users:read'),
    )
  },
)
