import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, type As, type BodyOf } from '../helpers/call.js'
import { auditRows, createKey, createTenant, createUser, tokenFor, userRow } from '../helpers/fixtures.js'

t.test('register: POST /register', async (t) => {
  // At production's cost: the stored hash's cost is asserted.
  const app = await buildTestApp(t, {}, { passwordCost: 12 })
  const tenant = await createTenant(app, { passwordPolicy: { requireDigit: true } })
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const adminToken = await tokenFor(app, admin)
  const signupKey = await createKey(app, tenant, ['users:create'])
  const reg = (body: BodyOf<'register'>, as: As = { key: signupKey.value }) =>
    call(app, 'register', as, { body })
  const registerRows = async (success: boolean) =>
    (await auditRows(app, tenant.id, 'REGISTER')).filter((r) => r.success === success)

  t.test('201 with a Client Key holding users:create; default role user', async (t) => {
    const res = await reg({ email: 'New.User@Example.test', password: 'long-enough-1' })
    t.equal(res.status, 201)
    const u = res.data
    t.equal(u.email, 'new.user@example.test')
    t.same(u.roles, ['user'])
    t.equal(u.tenantId, tenant.id)
    t.notOk('password' in u || 'passwordHash' in u)
    const row = await userRow(app, tenant.id, u.id)
    t.match(row.password_hash, /^\$2b\$12\$/)
    t.ok((await registerRows(true)).some((r) => r.user_id === u.id && r.actor_type === 'client_key'))
  })

  t.test('201 with a tenant admin JWT and explicit roles', async (t) => {
    const res = await reg(
      { email: 'second@example.test', password: 'long-enough-2', roles: ['admin'], emailVerified: true },
      { token: adminToken },
    )
    t.equal(res.status, 201)
    t.same(res.data.roles, ['admin'])
    t.equal(res.data.emailVerified, true)
  })

  t.test('401 without a credential', async (t) => {
    const res = await reg({ email: 'x@example.test', password: 'long-enough-3' }, {})
    t.equal(res.status, 401)
  })

  t.test('403 FORBIDDEN for a credential without users:create', async (t) => {
    const key = await createKey(app, tenant, ['users:read'])
    const res = await reg({ email: 'y@example.test', password: 'long-enough-4' }, { key: key.value })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
  })

  t.test('403 FORBIDDEN for another tenant code', async (t) => {
    const res = await reg({ email: 'z@example.test', password: 'long-enough-5', tenantCode: 'someone-else' })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    t.ok((await registerRows(false)).length >= 1, 'failure rows are written')
  })

  t.test('403 ROLE_HIERARCHY_VIOLATION when the key would give admin', async (t) => {
    const res = await reg({ email: 'w@example.test', password: 'long-enough-6', roles: ['admin'] })
    t.equal(res.status, 403)
    t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
  })

  t.test('404 ROLE_NOT_FOUND for an unknown role name', async (t) => {
    const res = await reg({ email: 'v@example.test', password: 'long-enough-7', roles: ['ghost'] })
    t.equal(res.status, 404)
    t.equal(res.code, 'ROLE_NOT_FOUND')
  })

  t.test('400 PASSWORD_POLICY_VIOLATION lists the failed rules', async (t) => {
    const short = await reg({ email: 'p1@example.test', password: 'qzx' })
    t.equal(short.status, 400)
    t.equal(short.code, 'PASSWORD_POLICY_VIOLATION')
    t.same(short.body.details, ['minLength', 'requireDigit'])
    const common = await reg({ email: 'p2@example.test', password: 'password1' })
    t.same(common.body.details, ['rejectCommon'])
    const long = await reg({ email: 'p3@example.test', password: 'é'.repeat(36) + '1' })
    t.same(long.body.details, ['maxBytes'])
  })

  t.test('400 VALIDATION_ERROR without an identifier of an enabled kind', async (t) => {
    const res = await reg({ username: 'only_username', password: 'long-enough-8' })
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
  })

  t.test('409 USER_ALREADY_EXISTS for the same email in one tenant, case-insensitively', async (t) => {
    await reg({ email: 'dup@example.test', password: 'long-enough-9' })
    const res = await reg({ email: 'DUP@example.test', password: 'long-enough-9' })
    t.equal(res.status, 409)
    t.equal(res.code, 'USER_ALREADY_EXISTS')
  })
})

t.test('getMe, validateToken: GET /me and POST /validate', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'], permissions: ['users:read'] })
  const token = await tokenFor(app, user)
  const auth = { token }

  t.test('getMe: 200 with the current state and effective permissions', async (t) => {
    const res = await call(app, 'getMe', auth)
    t.equal(res.status, 200)
    const d = res.data
    t.equal(d.id, user.id)
    t.equal(d.tenantCode, tenant.code)
    t.same(d.roles, ['user'])
    t.same(d.permissions, ['users:read'])
  })

  t.test('validateToken: 200 with claims and time left, with or without an empty JSON body', async (t) => {
    const res = await call(app, 'validateToken', auth)
    t.equal(res.status, 200)
    const d = res.data
    t.equal(d.valid, true)
    t.equal(d.claims.userId, user.id)
    t.ok(d.expiresIn > 890 && d.expiresIn <= 900)
    const withBody = await call(app, 'validateToken', auth, { body: {} })
    t.equal(withBody.status, 200)
  })

  t.test('getMe: 401 for a Client Key (a JWT-only endpoint)', async (t) => {
    const key = await createKey(app, tenant, ['users:read'])
    const res = await call(app, 'getMe', { key: key.value })
    t.equal(res.status, 401)
    t.equal(res.code, 'UNAUTHORIZED')
  })

  t.test('getMe: 404 USER_NOT_FOUND for a deleted user with a still-valid token', async (t) => {
    const gone = await createUser(app, tenant)
    const goneToken = await tokenFor(app, gone)
    await app.ctx.dbs.forTenant(tenant.id).deleteFrom('users').where('id', '=', gone.id).execute()
    const res = await call(app, 'getMe', { token: goneToken })
    t.equal(res.status, 404)
    t.equal(res.code, 'USER_NOT_FOUND')
  })
})
