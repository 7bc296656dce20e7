import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../helpers/app.js'
import { call, type AnyRes, type As } from '../helpers/call.js'
import { createKey, createTenant, createUser, platformKey, tokenFor } from '../helpers/fixtures.js'
import { decodeJwtUnverified, signJwt } from '../../src/lib/jwt.js'

// Platform powers come only from the platform tenant: a tenant that reads its own HS256 secret
// (getJwtSecret) can sign any claims for its own tenant, and no more than that.
t.test('forged platform powers outside the platform tenant: 403 and nothing changed', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const adminToken = await tokenFor(app, admin)
  const generated = await call(app, 'generateJwtSecret', { token: adminToken })
  t.equal(generated.status, 200, 'generateJwtSecret: the tenant holds its own secret')
  const { secret, kid } = generated.data as { secret: string; kid: string }
  const base = decodeJwtUnverified(adminToken)?.payload ?? {}
  const adminPermissions = base.permissions as string[]

  const forge = (permissions: string[]) => {
    const iat = Math.floor(Date.now() / 1000)
    return signJwt({ ...base, permissions, iat, exp: iat + 600, jti: randomUUID() }, secret, kid)
  }
  const powers = ['admin:*', 'tenants:delete', 'tenants:create']
  const credentials: [string, As][] = []
  for (const power of powers) {
    credentials.push([`token with ${power}`, { token: forge([power]) }])
    credentials.push([
      `token with the admin set plus ${power}`,
      { token: forge([...adminPermissions, power, 'tenants:*']) },
    ])
    // Inserted directly: the API itself refuses to give these scopes outside the platform tenant.
    const key = await createKey(app, tenant, [power, 'tenants:read', 'tenants:update', 'tenants:*'])
    credentials.push([`Client Key with ${power}`, { key: key.value }])
  }

  const routes: { op: string; send: (as: As) => Promise<AnyRes> }[] = [
    { op: 'deleteTenant (own)', send: (as) => call(app, 'deleteTenant', as, { params: { id: tenant.id } }) },
    { op: 'deleteTenant (other)', send: (as) => call(app, 'deleteTenant', as, { params: { id: other.id } }) },
    {
      op: 'createTenant',
      send: (as) =>
        call(app, 'createTenant', as, {
          body: { code: `forged-${randomUUID().slice(0, 8)}`, name: 'Forged' },
        }),
    },
    {
      op: 'setTenantDatabase',
      send: (as) =>
        call(app, 'setTenantDatabase', as, {
          params: { id: tenant.id },
          body: { url: 'postgres://u:p@db.example.test/x' },
        }),
    },
    {
      op: 'updateTenantConfig (rateLimits)',
      send: (as) =>
        call(app, 'updateTenantConfig', as, {
          params: { id: tenant.id },
          body: { rateLimits: { loginPerMinute: 1000 } },
        }),
    },
    {
      op: 'createClientKey (another tenant)',
      send: (as) =>
        call(app, 'createClientKey', as, {
          body: { tenantId: other.id, name: 'forged', scopes: ['users:read'] },
        }),
    },
  ]
  for (const [name, as] of credentials) {
    for (const r of routes) {
      const res = await r.send(as)
      const expected = r.op.endsWith('(other)') || r.op.includes('another') ? [403, 404] : [403]
      t.ok(expected.includes(res.status), `${r.op} with ${name}: ${res.status} ${res.code}`)
    }
    const list = await call(app, 'listTenants', as)
    if (list.status === 200) {
      const ids = list.data.items.map((x) => x.id)
      t.same(ids, [tenant.id], `listTenants with ${name}: only its own tenant`)
    } else t.equal(list.status, 403, `listTenants with ${name}`)
  }

  for (const id of [tenant.id, other.id]) {
    const res = await call(app, 'getTenant', platformKey, { params: { id } })
    t.equal(res.status, 200, 'both tenants still exist')
    t.equal(res.data.database.dedicated, false, 'routing unchanged')
    t.equal(res.data.auth_config.rateLimits.loginPerMinute, null, 'budgets unchanged')
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

  const real = await call(app, 'deleteTenant', platformKey, { params: { id: other.id } })
  t.equal(real.status, 200, 'deleteTenant: the platform still can')
})
