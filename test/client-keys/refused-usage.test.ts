import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'

t.test('requests refused by a key allowlist or the rate limit are logged against the key', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const auth = { token: await tokenFor(app, admin) }
  const key = await createKey(app, tenant, ['users:read'], { ipAllowlist: ['203.0.113.0/24'] })
  const refused = await call(app, 'listUsers', { key: key.value, ip: '198.51.100.20' })
  t.equal(refused.status, 403)
  t.equal(refused.code, 'IP_NOT_ALLOWED')
  let items: { statusCode: number; route: string }[] = []
  for (let i = 0; i < 30 && items.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    items = (await call(app, 'getClientKeyLogs', auth, { params: { id: key.id } })).data.items
  }
  t.equal(items.length, 1)
  t.equal(items[0]?.statusCode, 403)
  t.equal(items[0]?.route, '/api/v1/users')
})
