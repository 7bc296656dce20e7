// What the service changed so that its answers keep to the document's bounds (issue 19): requests refused
// while their body is read spend the per-IP budget and carry the X-RateLimit headers like every other
// answer; error bodies are bounded however much of the request they would repeat; an X-Forwarded-For that
// is not an address is never recorded as one.
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { auditRows, createTenant, freshIp, platformKey, userWithToken } from '../helpers/fixtures.js'

const app = await buildTestApp(t)

t.test('login: a body refused before the gate still spends the login budget', async (t) => {
  const ip = freshIp()
  const send = (payload: string, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url: '/api/v1/login',
      remoteAddress: ip,
      headers: { 'content-type': contentType },
      payload,
    })
  const refused = [
    await send(JSON.stringify({ identifier: 'x'.repeat(70 * 1024) })),
    await send('tenantCode=a', 'text/plain'),
    await send('{"tenantCode":'),
  ]
  t.same(
    refused.map((r) => r.statusCode),
    [413, 415, 400],
  )
  t.same(
    refused.map((r) => r.headers['x-ratelimit-remaining']),
    ['4', '3', '2'],
    'each one counted, and says so',
  )
  for (const r of refused) t.equal(r.headers['x-ratelimit-limit'], '5')
  await send('{')
  await send('{')
  const over = await send('{')
  t.equal(over.statusCode, 429, 'the sixth is refused for the budget')
  t.equal(over.json().code, 'RATE_LIMIT_EXCEEDED')
  t.ok(Number(over.headers['retry-after']) >= 1)
})

t.test('createRole: 400 lists at most 100 issues, each one line of at most 256 characters', async (t) => {
  const unknown: Record<string, number> = {}
  for (let i = 0; i < 300; i++) unknown[`p${i}\n`] = 1
  unknown['z'.repeat(1000)] = 1
  const res = await call(app, 'createRole', platformKey, { body: { name: 'r', ...unknown } })
  t.equal(res.status, 400)
  t.equal(res.code, 'VALIDATION_ERROR')
  const details = res.body.details as { path: string; message: string }[]
  t.equal(details.length, 100)
  const control = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20)
  for (const d of details) t.ok([...d.path].length <= 256 && !control(d.path), d.path.slice(0, 20))
})

t.test(
  'createClientKey: an error naming many unknown scopes is one line of at most 1024 characters',
  async (t) => {
    const scopes = Array.from({ length: 50 }, (_, i) => `unknown-resource-${i}:read`)
    const res = await call(app, 'createClientKey', platformKey, { body: { name: 'k', scopes } })
    t.equal(res.status, 404)
    t.equal(res.code, 'PERMISSION_NOT_FOUND')
    t.ok([...(res.body.error ?? '')].length <= 1024, 'cut to the bound')
    t.ok(res.body.error?.endsWith('…'), 'and says so')
  },
)

t.test('listAuthLogs: an X-Forwarded-For that is not an address is recorded as none', async (t) => {
  const tenant = await createTenant(app)
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    // Why loopback: the test apps' TRUST_PROXY (TEST_ENV) believes its X-Forwarded-For.
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': 'not-an-address' },
    payload: { tenantCode: tenant.code, identifier: 'nobody@example.test', password: 'whatever-it-is' },
  })
  t.equal(res.statusCode, 401)
  const rows = await auditRows(app, tenant.id, 'LOGIN')
  t.equal(rows.length, 1)
  t.equal(rows[0]?.ip_address, null)
  const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
  const logs = await call(app, 'listAuthLogs', cred, { query: { action: 'LOGIN' } })
  t.equal(logs.status, 200)
  t.equal(logs.data.items[0]?.ip_address, null)
})
