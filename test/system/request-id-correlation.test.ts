import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import type { TapTest } from '../helpers/db.js'
import { createKey, createTenant, createUser, freshIp, PASSWORD, tokenFor } from '../helpers/fixtures.js'

// Correlation (docs/decisions.md D7): audit rows carry the request's X-Request-Id as `request_id`, Client
// Key usage rows as `requestId`; the id is the caller's when well-formed, else the one in the response.

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const jwt = await tokenFor(app, admin)

const post = (url: string, payload: object, requestId?: string) =>
  app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    payload,
    remoteAddress: freshIp(),
    headers: requestId === undefined ? {} : { 'x-request-id': requestId },
  })

interface AuditRow {
  action: string
  success: boolean
  user_id: string | null
  request_id: string | null
}

async function auditRows(t: TapTest): Promise<AuditRow[]> {
  const res = await app.inject({
    method: 'GET',
    url: '/api/v1/auth-logs?limit=100',
    headers: { authorization: `Bearer ${jwt}` },
  })
  t.equal(res.statusCode, 200)
  return (res.json() as { data: { items: AuditRow[] } }).data.items
}

t.test('listAuthLogs: audit rows carry the request’s X-Request-Id as request_id', async (t) => {
  const user = await createUser(app, tenant)
  const login = await post(
    '/login',
    { tenantCode: tenant.code, identifier: user.email, password: PASSWORD },
    'abc-123',
  )
  t.equal(login.statusCode, 200)
  t.equal(login.headers['x-request-id'], 'abc-123')
  const { refreshToken } = (login.json() as { data: { refreshToken: string } }).data
  // The refresh writes its audit row inside its one-statement rotation.
  t.equal((await post('/refresh', { refreshToken }, 'refresh-456')).statusCode, 200)
  const wrong = { tenantCode: tenant.code, identifier: user.email, password: 'Wrong-password-1' }
  t.equal((await post('/login', wrong, 'fail-789')).statusCode, 401)
  // Without a (well-formed) X-Request-Id the row carries the id the service made and answered with.
  const bare = await post('/login', wrong)
  const invalid = await post('/login', wrong, 'not a valid id')
  t.not(invalid.headers['x-request-id'], 'not a valid id')

  const mine = (await auditRows(t)).filter((r) => r.user_id === user.id)
  const idOf = (action: string, success: boolean) =>
    mine.filter((r) => r.action === action && r.success === success).map((r) => r.request_id)
  t.same(idOf('LOGIN', true), ['abc-123'])
  t.same(idOf('REFRESH_TOKEN', true), ['refresh-456'])
  t.same(
    idOf('LOGIN', false).sort(),
    ['fail-789', bare.headers['x-request-id'], invalid.headers['x-request-id']].sort(),
  )
  t.ok(
    mine.every((r) => typeof r.request_id === 'string'),
    'every row written by a request has one',
  )
})

t.test('getClientKeyLogs: usage rows carry the request’s X-Request-Id as requestId', async (t) => {
  const key = await createKey(app, tenant, ['client-keys:read'])
  const use = (requestId?: string) =>
    app.inject({
      method: 'GET',
      url: '/api/v1/client-keys/scopes',
      remoteAddress: freshIp(),
      headers: {
        'x-client-key': key.value,
        ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
      },
    })
  const first = await use('abc-123')
  t.equal(first.statusCode, 200)
  const second = await use()
  t.equal(second.statusCode, 200)
  await app.keyUsage.flush()

  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/client-keys/${key.id}/logs`,
    headers: { authorization: `Bearer ${jwt}` },
  })
  t.equal(res.statusCode, 200)
  const items = (res.json() as { data: { items: { requestId: string | null }[] } }).data.items
  t.same(
    items.map((i) => i.requestId),
    [second.headers['x-request-id'], 'abc-123'],
    'newest first: the generated id, then the caller’s',
  )
})
