import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { decodeJwtUnverified, signJwt } from '../../src/lib/jwt.js'

// Platform powers come only from the platform tenant: a tenant that reads its own HS256 secret
// (getJwtSecret) can sign any claims for its own tenant, and no more than that.
t.test('forged platform powers outside the platform tenant: 403 and nothing changed', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const adminToken = await tokenFor(app, admin)
  const generated = await app.inject({
    method: 'POST',
    url: '/api/v1/tenants/me/jwt-secret/generate',
    headers: { authorization: `Bearer ${adminToken}` },
  })
  t.equal(generated.statusCode, 200, 'generateJwtSecret: the tenant holds its own secret')
  const { secret, kid } = generated.json().data as { secret: string; kid: string }
  const base = decodeJwtUnverified(adminToken)?.payload ?? {}
  const adminPermissions = base.permissions as string[]

  const forge = (permissions: string[]) => {
    const iat = Math.floor(Date.now() / 1000)
    return signJwt({ ...base, permissions, iat, exp: iat + 600, jti: randomUUID() }, secret, kid)
  }
  const powers = ['admin:*', 'tenants:delete', 'tenants:create']
  const credentials: [string, Record<string, string>][] = []
  for (const power of powers) {
    credentials.push([`token with ${power}`, { authorization: `Bearer ${forge([power])}` }])
    credentials.push([
      `token with the admin set plus ${power}`,
      { authorization: `Bearer ${forge([...adminPermissions, power, 'tenants:*'])}` },
    ])
    // Inserted directly: the API itself refuses to give these scopes outside the platform tenant.
    const key = await createKey(app, tenant, [power, 'tenants:read', 'tenants:update', 'tenants:*'])
    credentials.push([`Client Key with ${power}`, { 'x-client-key': key.value }])
  }

  const routes: { op: string; method: 'POST' | 'DELETE' | 'PUT' | 'PATCH'; url: string; payload?: object }[] =
    [
      { op: 'deleteTenant (own)', method: 'DELETE', url: `/api/v1/tenants/${tenant.id}` },
      { op: 'deleteTenant (other)', method: 'DELETE', url: `/api/v1/tenants/${other.id}` },
      {
        op: 'createTenant',
        method: 'POST',
        url: '/api/v1/tenants',
        payload: { code: `forged-${randomUUID().slice(0, 8)}`, name: 'Forged' },
      },
      {
        op: 'setTenantDatabase',
        method: 'PUT',
        url: `/api/v1/tenants/${tenant.id}/database`,
        payload: { url: 'postgres://u:p@db.example.test/x' },
      },
      {
        op: 'updateTenantConfig (rateLimits)',
        method: 'PATCH',
        url: `/api/v1/tenants/${tenant.id}/config`,
        payload: { rateLimits: { loginPerMinute: 1000 } },
      },
      {
        op: 'createClientKey (another tenant)',
        method: 'POST',
        url: '/api/v1/client-keys',
        payload: { tenantId: other.id, name: 'forged', scopes: ['users:read'] },
      },
    ]
  for (const [name, headers] of credentials) {
    for (const r of routes) {
      const res = await app.inject({ method: r.method, url: r.url, headers, payload: r.payload })
      const expected = r.op.endsWith('(other)') || r.op.includes('another') ? [403, 404] : [403]
      t.ok(expected.includes(res.statusCode), `${r.op} with ${name}: ${res.statusCode} ${res.json().code}`)
    }
    const list = await app.inject({ method: 'GET', url: '/api/v1/tenants', headers })
    if (list.statusCode === 200) {
      const ids = (list.json().data.items as { id: string }[]).map((x) => x.id)
      t.same(ids, [tenant.id], `listTenants with ${name}: only its own tenant`)
    } else t.equal(list.statusCode, 403, `listTenants with ${name}`)
  }

  const platform = { 'x-client-key': PLATFORM_KEY }
  for (const id of [tenant.id, other.id]) {
    const res = await app.inject({ method: 'GET', url: `/api/v1/tenants/${id}`, headers: platform })
    t.equal(res.statusCode, 200, 'both tenants still exist')
    t.equal(res.json().data.database.dedicated, false, 'routing unchanged')
    t.equal(res.json().data.auth_config.rateLimits.loginPerMinute, null, 'budgets unchanged')
  }
  const keys = await app.ctx.dbs.main
    .selectFrom('client_keys')
    .select('id')
    .where('tenant_id', '=', other.id)
    .execute()
  t.equal(keys.length, 0, 'no key was made in another tenant')
  const forged = await app.ctx.dbs.main
    .selectFrom('tenants')
    .select('id')
    .where('code', 'like', 'forged-%')
    .execute()
  t.equal(forged.length, 0, 'no tenant was created')

  const real = await app.inject({ method: 'DELETE', url: `/api/v1/tenants/${other.id}`, headers: platform })
  t.equal(real.statusCode, 200, 'deleteTenant: the platform still can')
})
