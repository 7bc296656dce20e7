import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'

t.test('requests refused by a key allowlist or the rate limit are logged against the key', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const auth = { authorization: `Bearer ${await tokenFor(app, admin)}` }
  const key = await createKey(app, tenant, ['users:read'], { ipAllowlist: ['203.0.113.0/24'] })
  const refused = await app.inject({
    method: 'GET',
    url: '/api/v1/users',
    remoteAddress: '198.51.100.20',
    headers: { 'x-client-key': key.value },
  })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'IP_NOT_ALLOWED')
  let items: { statusCode: number; route: string }[] = []
  for (let i = 0; i < 30 && items.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    items = (
      await app.inject({ method: 'GET', url: `/api/v1/client-keys/${key.id}/logs`, headers: auth })
    ).json().data.items
  }
  t.equal(items.length, 1)
  t.equal(items[0]?.statusCode, 403)
  t.equal(items[0]?.route, '/api/v1/users')
})
