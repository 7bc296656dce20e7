import t from 'tap'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'

t.test('bootstrap: platform tenant, admin user and key from the environment', async (t) => {
  const app = await buildTestApp(t, {
    BOOTSTRAP_ADMIN_EMAIL: 'ops@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'Ops-password-77',
  })
  const platform = await app.ctx.tenants.byCode('platform')
  t.ok(platform?.isPlatform)
  const login = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': '203.0.113.77', 'user-agent': 'tessera-test/1' },
    payload: { tenantCode: 'PLATFORM', identifier: 'ops@example.test', password: 'Ops-password-77' },
  })
  t.equal(login.statusCode, 200)
  const { accessToken } = login.json().data
  const me = await app.inject({
    method: 'GET',
    url: '/api/v1/me',
    headers: { authorization: `Bearer ${accessToken}` },
  })
  t.same(me.json().data.permissions, ['admin:*'], 'the platform admin holds admin:*')
  const row = await app.ctx.dbs.main
    .selectFrom('tessera_audit.audit_log')
    .select(['ip_address', 'user_agent', 'success'])
    .where('tenant_id', '=', platform?.id as string)
    .where('action', '=', 'LOGIN')
    .executeTakeFirstOrThrow()
  t.same(
    row,
    { ip_address: '203.0.113.77', user_agent: 'tessera-test/1', success: true },
    'ip from X-Forwarded-For',
  )
  const keyed = await app.inject({
    method: 'GET',
    url: '/api/v1/auth-logs',
    headers: { authorization: `Bearer ${accessToken}` },
  })
  t.equal(keyed.statusCode, 200)
  t.ok(PLATFORM_KEY.startsWith('ck_'))
})

t.test('TRUST_PROXY=false ignores X-Forwarded-For', async (t) => {
  const app = await buildTestApp(t, {
    TRUST_PROXY: 'false',
    BOOTSTRAP_ADMIN_EMAIL: 'ops@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'Ops-password-77',
  })
  await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': '203.0.113.77' },
    payload: { tenantCode: 'platform', identifier: 'ops@example.test', password: 'wrong-password' },
  })
  const row = await app.ctx.dbs.main
    .selectFrom('tessera_audit.audit_log')
    .select('ip_address')
    .executeTakeFirstOrThrow()
  t.equal(row.ip_address, '127.0.0.1')
})
