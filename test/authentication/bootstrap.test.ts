import t from 'tap'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { call } from '../helpers/call.js'

t.test('bootstrap: platform tenant, admin user and key from the environment', async (t) => {
  const app = await buildTestApp(t, {
    BOOTSTRAP_ADMIN_EMAIL: 'ops@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'Ops-password-77',
  })
  const platform = await app.ctx.tenants.byCode('platform')
  t.ok(platform?.isPlatform)
  const login = await call(
    app,
    'login',
    { ip: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.77', 'user-agent': 'tessera-test/1' } },
    { body: { tenantCode: 'PLATFORM', identifier: 'ops@example.test', password: 'Ops-password-77' } },
  )
  t.equal(login.status, 200)
  const { accessToken } = login.data
  const me = await call(app, 'getMe', { token: accessToken })
  t.same(me.data.permissions, ['admin:*'], 'the platform admin holds admin:*')
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
  const keyed = await call(app, 'listAuthLogs', { token: accessToken })
  t.equal(keyed.status, 200)
  t.ok(PLATFORM_KEY.startsWith('ck_'))
})

t.test('TRUST_PROXY=false ignores X-Forwarded-For', async (t) => {
  const app = await buildTestApp(t, {
    TRUST_PROXY: 'false',
    BOOTSTRAP_ADMIN_EMAIL: 'ops@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'Ops-password-77',
  })
  await call(
    app,
    'login',
    { ip: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.77' } },
    { body: { tenantCode: 'platform', identifier: 'ops@example.test', password: 'wrong-password' } },
  )
  const row = await app.ctx.dbs.main
    .selectFrom('tessera_audit.audit_log')
    .select('ip_address')
    .executeTakeFirstOrThrow()
  t.equal(row.ip_address, '127.0.0.1')
})
