import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { insertRole } from '../helpers/fixtures.js'
import { ORIGIN, PK_ENV, signupWith, tenantWithKey } from './support.js'

// A sign-up can never make an administrator (contract section 20): default roles with a management
// permission are refused when given, and a role that gains one later makes sign-ups fail closed.

const PASSWORD = 'Signup-pass-1'

t.test('signup: default roles, checked again at every sign-up', async (t) => {
  const app = await buildTestApp(t, { ...PK_ENV, SMTP_URL: 'log://' })

  t.test('signup: 403 FORBIDDEN once a default role gained users:delete; nobody is created', async (t) => {
    const { tenant, admin, key } = await tenantWithKey(app)
    const roleId = await insertRole(app, tenant, 'member', 10, ['auth:logs'])
    const given = await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: key.id },
      body: { defaultRoles: ['member'] },
    })
    t.equal(given.status, 200)
    const before = await signupWith(app, key.key, { email: 'before@example.test', password: PASSWORD })
    t.equal(before.status, 201)
    t.same(before.data.roles, ['member'])

    const edit = await call(app, 'addRolePermissions', admin.cred, {
      params: { id: roleId },
      body: { permissions: ['users:delete'] },
    })
    t.equal(edit.status, 200, edit.raw)
    const after = await signupWith(app, key.key, { email: 'after@example.test', password: PASSWORD })
    t.equal(after.status, 403)
    t.equal(after.code, 'FORBIDDEN')
    const created = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .where('email', '=', 'after@example.test')
      .execute()
    t.same(created, [], 'the sign-up failed closed')
  })

  t.test('signup: 403 FORBIDDEN once a default role was deleted', async (t) => {
    const { tenant, admin, key } = await tenantWithKey(app)
    const roleId = await insertRole(app, tenant, 'gone', 10, [])
    await call(app, 'updatePublishableKey', admin.cred, {
      params: { id: key.id },
      body: { defaultRoles: ['gone'] },
    })
    await call(app, 'deleteRole', admin.cred, { params: { id: roleId } })
    const res = await signupWith(app, key.key, { email: 'gone@example.test', password: PASSWORD })
    t.equal(res.status, 403)
  })

  t.test('signup: the verification mail goes out when the tenant’s verification is on', async (t) => {
    const { tenant, key } = await tenantWithKey(
      app,
      { allowedOrigins: [ORIGIN] },
      { email: { verification: 'optional' } },
    )
    const res = await signupWith(app, key.key, { email: 'verify@example.test', password: PASSWORD })
    t.equal(res.status, 201)
    const tokens = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('email_tokens')
      .select(['purpose', 'email'])
      .where('user_id', '=', res.data.id)
      .execute()
    t.same(tokens, [{ purpose: 'verify', email: 'verify@example.test' }])
  })
})
