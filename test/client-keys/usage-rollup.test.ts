import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, platformKey, tokenFor } from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'
import { insertUsageRows, type UsageRow } from '../../src/modules/client-keys/usage-queries.js'
import { countableUntil } from '../../src/modules/client-keys/usage-rollup-queries.js'
import { sweepOnce } from '../../src/modules/system/retention.js'

// GET /client-keys/{id}/stats on the hourly rollup (migration 0022, docs/decisions.md D29): the answer is
// the same whether a row is counted or not yet, each row is counted once, and retention takes the counts
// with the rows.

const HOUR = 3_600_000
const DAY = 24 * HOUR

t.test('countableUntil: the start of the latest hour that ended 15 minutes ago', async (t) => {
  const at = (iso: string) => countableUntil(Date.parse(iso)).toISOString()
  t.equal(at('2030-01-01T10:14:00Z'), '2030-01-01T09:00:00.000Z', 'the 9 o’clock hour is not settled yet')
  t.equal(at('2030-01-01T10:15:00Z'), '2030-01-01T10:00:00.000Z')
  t.equal(at('2030-01-01T10:59:59Z'), '2030-01-01T10:00:00.000Z')
})

t.test('getClientKeyStats: counted hours and the rows since', async (t) => {
  const clock = createManualClock(Date.parse('2030-03-10T12:30:00Z'))
  const app = await buildTestApp(t, { USAGE_RETENTION_DAYS: '30' }, { clock })
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const key = await createKey(app, tenant, ['users:read'])
  const db = app.ctx.dbs.main
  const row = (agoMs: number, route: string, statusCode: number): UsageRow => ({
    tenantId: tenant.id,
    keyId: key.id,
    method: 'GET',
    route,
    statusCode,
    ip: null,
    origin: null,
    userAgent: null,
    requestId: null,
    createdAt: new Date(clock.now() - agoMs).toISOString(),
  })
  const stats = async () => {
    const jwt = await tokenFor(app, admin)
    const res = await call(app, 'getClientKeyStats', { token: jwt }, { params: { id: key.id } })
    t.equal(res.status, 200)
    return res.body.data
  }
  const hourly = () =>
    db
      .selectFrom('client_key_usage_hourly')
      .select(['hour', 'route', 'total', 's2', 's4', 's5'])
      .where('key_id', '=', key.id)
      .orderBy('hour')
      .orderBy('route')
      .execute()
  const mark = async () =>
    (
      await db
        .selectFrom('client_key_usage_marks')
        .select('covered_to')
        .where('key_id', '=', key.id)
        .executeTakeFirst()
    )?.covered_to

  await insertUsageRows(db, [
    row(40 * DAY, '/api/v1/users', 200),
    row(3 * DAY, '/api/v1/users', 200),
    row(3 * DAY, '/api/v1/users', 404),
    row(3 * DAY + HOUR, '/api/v1/me', 500),
    row(2 * HOUR, '/api/v1/users', 200),
    row(5 * 60_000, '/api/v1/me', 200),
  ])
  const expected = {
    totalRequests: 6,
    last24h: 2,
    byStatus: { '2xx': 4, '4xx': 1, '5xx': 1 },
    lastUsedAt: null,
    topRoutes: [
      { route: '/api/v1/users', count: 4 },
      { route: '/api/v1/me', count: 2 },
    ],
  }

  t.test('the first answer reads the rows, and counts the closed hours for the next', async (t) => {
    t.same(await stats(), expected)
    t.equal(new Date((await mark()) ?? 0).toISOString(), '2030-03-10T12:00:00.000Z', 'counted up to 12:00')
    const counted = await hourly()
    t.equal(
      counted.reduce((n, r) => n + r.total, 0),
      5,
      'every row before the mark is counted, the 12:25 one is not',
    )
    t.same(
      counted.find((r) => r.route === '/api/v1/users' && r.total === 2),
      { ...counted.find((r) => r.total === 2), s2: 1, s4: 1, s5: 0 },
      'status classes per hour and route',
    )
    t.same(await stats(), expected, 'the same answer from the counts')
  })

  t.test('an hour later the next closed hour is added once; parallel readers count it once', async (t) => {
    await insertUsageRows(db, [row(60_000, '/api/v1/users', 401)])
    clock.advance(HOUR)
    const answers = await Promise.all(Array.from({ length: 5 }, () => stats()))
    const next = {
      ...expected,
      totalRequests: 7,
      last24h: 3,
      byStatus: { '2xx': 4, '4xx': 2, '5xx': 1 },
      topRoutes: [
        { route: '/api/v1/users', count: 5 },
        { route: '/api/v1/me', count: 2 },
      ],
    }
    for (const a of answers) t.same(a, next)
    t.equal(
      (await hourly()).reduce((n, r) => n + r.total, 0),
      7,
      'no row counted twice',
    )
    t.same(await stats(), next)
  })

  t.test('retention takes the counted hours with their rows', async (t) => {
    await sweepOnce(app.ctx)
    const counted = await hourly()
    t.ok(
      counted.every((r) => new Date(r.hour).getTime() >= clock.now() - 30 * DAY),
      'no count older than the retention period',
    )
    t.equal((await stats()).totalRequests, 6, 'the 40-day-old request is gone from the counts too')
  })

  t.test("deleting the tenant takes its keys' counts", async (t) => {
    t.ok((await hourly()).length > 0, 'counted hours before')
    const res = await call(app, 'deleteTenant', platformKey, { params: { id: tenant.id } })
    t.equal(res.status, 200)
    t.same(await hourly(), [])
    t.equal(await mark(), undefined)
  })
})
