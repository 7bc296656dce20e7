import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { auditRows } from '../helpers/fixtures.js'
import { PK_ENV, pk, signupWith, tenantWithKey } from './support.js'

t.test('signup: POST /signup', async (t) => {
  const app = await buildTestApp(t, PK_ENV)

  t.test(
    '201: the user, with the key’s default roles and emailVerified false; a REGISTER row via the key',
    async (t) => {
      const { tenant, key } = await tenantWithKey(app, { defaultRoles: ['user'] })
      const res = await signupWith(app, key.key, { email: 'Ana@Example.test', password: 'Signup-pass-1' })
      t.equal(res.status, 201, res.raw)
      t.equal(res.data.email, 'ana@example.test')
      t.same(res.data.roles, ['user'])
      t.equal(res.data.emailVerified, false)
      t.equal(res.data.tenantId, tenant.id)
      const rows = await auditRows(app, tenant.id, 'REGISTER')
      const row = rows.find((r) => r.user_id === res.data.id)
      t.ok(row?.success)
      t.same(row?.metadata, { via: 'publishable_key', keyId: key.id })
      t.equal(row?.actor_type, null)
    },
  )

  t.test('getSignupChallenge: 200 the ALTCHA challenge', async (t) => {
    const { key } = await tenantWithKey(app)
    const res = await call(app, 'getSignupChallenge', pk(key.key))
    t.equal(res.status, 200)
    t.equal(res.data.algorithm, 'SHA-256')
    t.match(res.data.salt, /expires=\d+/)
    t.equal(res.headers.vary, 'Origin')
  })
})
