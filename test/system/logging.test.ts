import t from 'tap'
import { buildLoggedTestApp } from '../helpers/app.js'
import { createTenant, createUser, freshIp, PASSWORD } from '../helpers/fixtures.js'

t.test('logs never carry passwords, tokens or keys', async (t) => {
  const { app, lines } = await buildLoggedTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const ip = freshIp()
  const login = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: ip,
    payload: { tenantCode: tenant.code, identifier: user.email, password: PASSWORD },
  })
  t.equal(login.statusCode, 200)
  const { accessToken, refreshToken } = login.json().data
  await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${accessToken}` } })
  await app.inject({ method: 'POST', url: '/api/v1/refresh', payload: { refreshToken } })
  await app.inject({ method: 'GET', url: '/api/v1/me', headers: { 'x-client-key': 'ck_' + 'z'.repeat(43) } })
  app.log.error({ err: new Error('connect to postgres://bob:hunter2@db.internal/x failed') }, 'db problem')
  const all = lines.join('\n')
  t.ok(lines.length > 3, 'something was logged')
  t.notMatch(all, PASSWORD, 'no password')
  t.notMatch(all, accessToken, 'no access token')
  t.notMatch(all, refreshToken, 'no refresh token')
  t.notMatch(all, 'z'.repeat(43), 'no client key')
  t.notMatch(all, 'hunter2', 'no URL credentials')
})
