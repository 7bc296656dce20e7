import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import type { TapTest } from '../helpers/db.js'
import { call, login as loginWith, refresh, type As } from '../helpers/call.js'
import { createKey, createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'

// Correlation (docs/decisions.md D7): audit rows carry the request's X-Request-Id as `request_id`, Client
// Key usage rows as `requestId`; the id is the caller's when well-formed, else the one in the response.

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const jwt = await tokenFor(app, admin)

/** A caller from a fresh address that sends `X-Request-Id: requestId` when given. */
const withId = (requestId?: string): As => ({
  headers: requestId === undefined ? {} : { 'x-request-id': requestId },
})

interface AuditRow {
  action: string
  success: boolean
  user_id: string | null
  request_id: string | null
}

async function auditRows(t: TapTest): Promise<AuditRow[]> {
  const res = await call(app, 'listAuthLogs', { token: jwt }, { query: { limit: 100 } })
  t.equal(res.status, 200)
  return res.data.items as AuditRow[]
}

t.test('listAuthLogs: audit rows carry the request’s X-Request-Id as request_id', async (t) => {
  const user = await createUser(app, tenant)
  const login = await call(app, 'login', withId('abc-123'), {
    body: { tenantCode: tenant.code, identifier: user.email, password: PASSWORD },
  })
  t.equal(login.status, 200)
  t.equal(login.headers['x-request-id'], 'abc-123')
  const { refreshToken } = login.data
  // The refresh writes its audit row inside its one-statement rotation.
  t.equal((await refresh(app, refreshToken, withId('refresh-456'))).status, 200)
  const wrong = { tenantCode: tenant.code, identifier: user.email, password: 'Wrong-password-1' }
  t.equal((await call(app, 'login', withId('fail-789'), { body: wrong })).status, 401)
  // Without a (well-formed) X-Request-Id the row carries the id the service made and answered with.
  const bare = await loginWith(app, tenant.code, user.email, 'Wrong-password-1')
  const invalid = await call(app, 'login', withId('not a valid id'), { body: wrong })
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
    call(app, 'listClientKeyScopes', { ...withId(requestId), key: key.value })
  const first = await use('abc-123')
  t.equal(first.status, 200)
  const second = await use()
  t.equal(second.status, 200)
  await app.keyUsage.flush()

  const res = await call(app, 'getClientKeyLogs', { token: jwt }, { params: { id: key.id } })
  t.equal(res.status, 200)
  const items = res.data.items
  t.same(
    items.map((i) => i.requestId),
    [second.headers['x-request-id'], 'abc-123'],
    'newest first: the generated id, then the caller’s',
  )
})
