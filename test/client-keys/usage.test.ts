import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor, waitFor } from '../helpers/fixtures.js'
import { call, type AnyRes, type Req } from '../helpers/call.js'
import { insertUsageRows } from '../../src/modules/client-keys/usage-queries.js'

// The usage log and statistics (getClientKeyLogs, getClientKeyStats): every request made with a key,
// visible within 2 s.
const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
let jwt = await tokenFor(app, admin, 86_400)
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

const logsOf = (id: string, query: Req<'getClientKeyLogs'>['query'] = {}) =>
  call(app, 'getClientKeyLogs', { token: jwt }, { params: { id }, query })
const statsOf = (id: string) => call(app, 'getClientKeyStats', { token: jwt }, { params: { id } })

t.test(
  'getClientKeyLogs, getClientKeyStats: logs and stats after a known sequence of requests',
  async (t) => {
    const k = await createKey(app, tenant, ['client-keys:read'])
    const other = await createKey(app, tenant, ['client-keys:read'])
    const seq: [string, () => Promise<AnyRes>, number][] = [
      ['GET /tenant', () => call(app, 'listTenantClientKeys', { key: k.value, ip: '198.51.100.1' }), 200],
      [
        'GET /tenant',
        () => call(app, 'listTenantClientKeys', { bearerKey: k.value, ip: '198.51.100.2' }),
        200,
      ],
      [
        'GET /scopes',
        () =>
          call(app, 'listClientKeyScopes', {
            key: k.value,
            ip: '2001:db8::7',
            headers: { origin: 'https://a.test', 'user-agent': 'probe/1' },
          }),
        200,
      ],
      [
        'GET /{unknown id}',
        () =>
          call(
            app,
            'getClientKey',
            { key: k.value, ip: '::ffff:198.51.100.3' },
            { params: { id: UNKNOWN_ID } },
          ),
        404,
      ],
      [
        'POST',
        () => call(app, 'createClientKey', { key: k.value }, { body: { name: 'x', scopes: ['users:read'] } }),
        403,
      ],
      [
        'GET /not-a-uuid',
        () => call(app, 'getClientKey', { key: k.value }, { params: { id: 'not-a-uuid' } }),
        400,
      ],
    ]
    for (const [what, request, status] of seq) {
      t.equal((await request()).status, status, what)
    }
    const sent = Date.now()
    // Not logged against the key: other credentials, unknown keys, and other keys.
    await call(app, 'listTenantClientKeys', { token: jwt })
    await call(app, 'listTenantClientKeys', { key: 'ck_' + 'n'.repeat(43) })
    await call(app, 'listTenantClientKeys', { key: other.value })

    const visibleAfter = await waitFor(async () => (await logsOf(k.id)).body.data.total === 6, 2000, 25)
    t.ok(visibleAfter >= 0, `all six rows visible within 2 s (after ${Date.now() - sent} ms)`)

    const logs = (await logsOf(k.id)).body.data
    t.equal(logs.total, 6)
    t.equal(logs.limit, 50)
    t.same(
      logs.items.map((l: { method: string; route: string; statusCode: number }) => [
        l.method,
        l.route,
        l.statusCode,
      ]),
      [
        ['GET', '/api/v1/client-keys/:id', 400],
        ['POST', '/api/v1/client-keys', 403],
        ['GET', '/api/v1/client-keys/:id', 404],
        ['GET', '/api/v1/client-keys/scopes', 200],
        ['GET', '/api/v1/client-keys/tenant', 200],
        ['GET', '/api/v1/client-keys/tenant', 200],
      ],
      'newest first, with route templates',
    )
    t.equal(logs.items[2]?.ip, '198.51.100.3', 'an IPv4-mapped address is logged as IPv4')
    t.match(logs.items[3], { ip: '2001:db8::7', origin: 'https://a.test', userAgent: 'probe/1', keyId: k.id })
    t.equal(logs.items[5]?.ip, '198.51.100.1')
    t.equal(logs.items[5]?.origin, null)

    const page = (await logsOf(k.id, { limit: 2, offset: 1 })).body.data
    t.same(
      page.items.map((l: { id: string }) => l.id),
      [logs.items[1]?.id, logs.items[2]?.id],
    )

    const stats = (await statsOf(k.id)).body.data
    t.same(stats, {
      totalRequests: 6,
      last24h: 6,
      byStatus: { '2xx': 3, '4xx': 3, '5xx': 0 },
      lastUsedAt: logs.items[0]?.createdAt,
      topRoutes: [
        { route: '/api/v1/client-keys/:id', count: 2 },
        { route: '/api/v1/client-keys/tenant', count: 2 },
        { route: '/api/v1/client-keys', count: 1 },
        { route: '/api/v1/client-keys/scopes', count: 1 },
      ],
    })
    const key = (await call(app, 'getClientKey', { token: jwt }, { params: { id: k.id } })).body.data
    t.equal(key.lastUsedAt, stats.lastUsedAt, 'the key shows lastUsedAt too')
  },
)

t.test('getClientKeyStats: last24h counts the last 24 hours only', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'])
  await call(app, 'listTenantClientKeys', { key: k.value })
  await call(app, 'listTenantClientKeys', { key: k.value })
  await app.keyUsage.flush()
  clock.advance(25 * 3_600_000)
  // Access tokens live a day at most: a fresh one for the rest of the file.
  jwt = await tokenFor(app, admin)
  await call(app, 'listTenantClientKeys', { key: k.value })
  await app.keyUsage.flush()
  const stats = (await statsOf(k.id)).body.data
  t.equal(stats.totalRequests, 3)
  t.equal(stats.last24h, 1)
  t.equal(stats.lastUsedAt, new Date(clock.now()).toISOString())
})

t.test('getClientKeyLogs, getClientKeyStats: a fresh key has empty logs and zero stats', async (t) => {
  const k = await createKey(app, tenant, ['users:read'])
  const logs = (await logsOf(k.id)).body.data
  t.same(logs, { items: [], total: 0, limit: 50, offset: 0 })
  t.same((await statsOf(k.id)).body.data, {
    totalRequests: 0,
    last24h: 0,
    byStatus: { '2xx': 0, '4xx': 0, '5xx': 0 },
    lastUsedAt: null,
    topRoutes: [],
  })
})

t.test('getClientKeyLogs, getClientKeyStats: errors', async (t) => {
  const k = await createKey(app, tenant, ['users:read'])
  const other = await createTenant(app)
  const otherAdmin = await createUser(app, other, { roles: ['admin'] })
  const otherJwt = await tokenFor(app, otherAdmin)
  for (const op of ['getClientKeyLogs', 'getClientKeyStats'] as const) {
    const cross = await call(app, op, { token: otherJwt }, { params: { id: k.id } })
    t.equal(cross.status, 404, `${op}: another tenant's key`)
    t.equal(cross.body.code, 'CLIENT_KEY_NOT_FOUND')
    const noScope = await call(app, op, { key: k.value }, { params: { id: k.id } })
    t.equal(noScope.status, 403, `${op}: without client-keys:read`)
    t.equal(noScope.body.code, 'FORBIDDEN')
  }
  const tooMany = await logsOf(k.id, { limit: 501 })
  t.equal(tooMany.status, 400)
  t.equal(tooMany.body.code, 'VALIDATION_ERROR')
  t.equal((await logsOf(k.id, { limit: 500 })).status, 200)
})

t.test('getClientKeyStats: the ten most used routes, most used first, ties by route', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'])
  const other = await createKey(app, tenant, ['client-keys:read'])
  const at = new Date(clock.now()).toISOString()
  // Route i is used i times (1..12), with a tie at the top: /r/12 and /r/12b, 12 each.
  const rows = [
    ...Array.from({ length: 12 }, (_, i) => [`/r/${i + 1}`, i + 1] as const),
    ['/r/12b', 12] as const,
  ]
    .flatMap(([route, n]) => Array.from({ length: n }, (_, j) => ({ route, statusCode: j % 2 ? 500 : 204 })))
    .map((r) => ({
      ...r,
      tenantId: tenant.id,
      keyId: k.id,
      method: 'GET',
      ip: null,
      origin: null,
      userAgent: null,
      requestId: null,
      createdAt: at,
    }))
  await insertUsageRows(app.ctx.dbs.main, [...rows, { ...rows[0]!, keyId: other.id, route: '/r/other' }])
  const stats = (await statsOf(k.id)).body.data
  t.equal(stats.totalRequests, rows.length)
  t.same(stats.byStatus, {
    '2xx': rows.filter((r) => r.statusCode === 204).length,
    '4xx': 0,
    '5xx': rows.filter((r) => r.statusCode === 500).length,
  })
  t.same(
    stats.topRoutes,
    [
      ['/r/12', 12],
      ['/r/12b', 12],
      ['/r/11', 11],
      ['/r/10', 10],
      ['/r/9', 9],
      ['/r/8', 8],
      ['/r/7', 7],
      ['/r/6', 6],
      ['/r/5', 5],
      ['/r/4', 4],
    ].map(([route, count]) => ({ route, count })),
  )
})
