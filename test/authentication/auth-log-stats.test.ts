import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { AuditAction } from '../../src/db/database.js'
import { findRollupMark, purgeRollups, trimRollups } from '../../src/modules/audit/rollup-queries.js'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked, type As } from '../helpers/call.js'
import { createTenant, keyCred, userWithToken, type TenantFx } from '../helpers/fixtures.js'

// GET /auth-logs/stats. Rows are written straight to the audit log with chosen times, so every bucket's
// expected count is known; the times sit far in the past so no row the test's own logins write falls in.

type Row = { action: AuditAction; success: boolean; at: string; error?: string }

async function insertRows(app: FastifyInstance, tenant: TenantFx, rows: Row[]): Promise<void> {
  await app.ctx.dbs
    .forTenant(tenant.id)
    .insertInto('tessera_audit.audit_log')
    .values(
      rows.map((r) => ({
        tenant_id: tenant.id,
        action: r.action,
        success: r.success,
        error_message: r.error ?? null,
        metadata: {},
        created_at: new Date(r.at),
      })),
    )
    .execute()
}

/** The tenant's admin, and its rows of a morning and of the days around it. */
async function seeded(app: FastifyInstance) {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  await insertRows(app, tenant, [
    { action: 'LOGIN', success: true, at: '2020-03-10T09:00:00Z' },
    { action: 'LOGIN', success: true, at: '2020-03-10T09:59:59.999Z' },
    { action: 'LOGIN', success: false, at: '2020-03-10T09:30:00Z' },
    { action: 'LOGIN', success: false, at: '2020-03-10T11:15:00Z' },
    // Stopped at the second factor: the password was right; not a failure (as in the tenant metrics).
    { action: 'LOGIN', success: false, at: '2020-03-10T11:20:00Z', error: 'OTP_REQUIRED' },
    { action: 'REFRESH_TOKEN', success: true, at: '2020-03-10T10:05:00Z' },
    { action: 'LOGIN', success: true, at: '2020-03-08T23:59:59Z' },
    { action: 'LOGIN', success: false, at: '2020-03-12T00:00:00Z' },
  ])
  return { tenant, admin }
}

t.test('getAuthLogStats: GET /auth-logs/stats', async (t) => {
  const app = await buildTestApp(t)

  t.test('by hour: counts per action and outcome, continuous, from rounded down', async (t) => {
    const { admin } = await seeded(app)
    const res = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'hour', from: '2020-03-10T09:40:00Z', to: '2020-03-10T12:00:00Z' },
    })
    t.equal(res.status, 200)
    t.equal(res.data.bucket, 'hour')
    t.equal(res.data.from, '2020-03-10T09:00:00.000Z', 'from is the start of its bucket')
    t.equal(res.data.to, '2020-03-10T12:00:00.000Z')
    const hours = ['09', '10', '11'].map((h) => `2020-03-10T${h}:00:00.000Z`)
    t.same(res.data.series, [
      {
        action: 'LOGIN',
        buckets: [
          { start: hours[0], success: 2, failure: 1 },
          { start: hours[1], success: 0, failure: 0 },
          { start: hours[2], success: 0, failure: 1 },
        ],
      },
      {
        action: 'REFRESH_TOKEN',
        buckets: [
          { start: hours[0], success: 0, failure: 0 },
          { start: hours[1], success: 1, failure: 0 },
          { start: hours[2], success: 0, failure: 0 },
        ],
      },
    ])
  })

  t.test('by day: UTC days, to exclusive, zero-filled days', async (t) => {
    const { admin } = await seeded(app)
    const res = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'day', from: '2020-03-08T12:00:00+02:00', to: '2020-03-12T00:00:00Z' },
    })
    t.equal(res.status, 200)
    t.equal(res.data.from, '2020-03-08T00:00:00.000Z', '10:00 UTC rounds down to the UTC day')
    const login = res.data.series.find((s) => s.action === 'LOGIN')
    t.same(login?.buckets, [
      { start: '2020-03-08T00:00:00.000Z', success: 1, failure: 0 },
      { start: '2020-03-09T00:00:00.000Z', success: 0, failure: 0 },
      { start: '2020-03-10T00:00:00.000Z', success: 2, failure: 2 },
      { start: '2020-03-11T00:00:00.000Z', success: 0, failure: 0 },
    ])
    t.same(
      res.data.series.map((s) => s.action),
      ['LOGIN', 'REFRESH_TOKEN'],
    )
  })

  t.test('a window without rows has no series', async (t) => {
    const { admin } = await seeded(app)
    const res = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'day', from: '2019-01-01T00:00:00Z', to: '2019-02-01T00:00:00Z' },
    })
    t.equal(res.status, 200)
    t.same(res.data.series, [])
  })

  t.test('another tenant’s rows are never counted', async (t) => {
    const { admin } = await seeded(app)
    const other = await seeded(app)
    await insertRows(app, other.tenant, [{ action: 'LOGOUT', success: true, at: '2020-03-10T10:00:00Z' }])
    const res = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'day', from: '2020-03-10T00:00:00Z', to: '2020-03-11T00:00:00Z' },
    })
    t.equal(res.status, 200)
    t.same(res.data.series, [
      { action: 'LOGIN', buckets: [{ start: '2020-03-10T00:00:00.000Z', success: 2, failure: 2 }] },
      { action: 'REFRESH_TOKEN', buckets: [{ start: '2020-03-10T00:00:00.000Z', success: 1, failure: 0 }] },
    ])
  })

  t.test('defaults: by hour, the last 24 hours; by day, the last 30 days', async (t) => {
    const { tenant, admin } = await seeded(app)
    await insertRows(app, tenant, [
      { action: 'USER_DELETE', success: true, at: new Date(Date.now() - 2 * 3_600_000).toISOString() },
    ])
    const hourly = await call(app, 'getAuthLogStats', admin.cred, {})
    t.equal(hourly.status, 200)
    t.equal(hourly.data.bucket, 'hour')
    const span = Date.parse(hourly.data.to) - Date.parse(hourly.data.from)
    t.ok(span > 24 * 3_600_000 - 1 && span <= 25 * 3_600_000, 'from is 24 h before to, rounded down')
    const deletes = hourly.data.series.find((s) => s.action === 'USER_DELETE')
    t.equal(deletes?.buckets.length, 25, 'one bucket per hour, the current one included')
    t.equal(
      deletes?.buckets.reduce((n, b) => n + b.success, 0),
      1,
    )
    const daily = await call(app, 'getAuthLogStats', admin.cred, { query: { bucket: 'day' } })
    t.equal(daily.status, 200)
    t.equal(daily.data.series.find((s) => s.action === 'USER_DELETE')?.buckets.length, 31)
  })

  t.test('the longest windows: 7 days by hour, 366 days by day', async (t) => {
    const { admin } = await seeded(app)
    const week = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'hour', from: '2020-03-05T00:30:00Z', to: '2020-03-12T00:30:00Z' },
    })
    t.equal(week.status, 200)
    t.equal(week.data.series[0]?.buckets.length, 169)
    const year = await call(app, 'getAuthLogStats', admin.cred, {
      query: { bucket: 'day', from: '2019-06-01T12:00:00Z', to: '2020-06-01T12:00:00Z' },
    })
    t.equal(year.status, 200)
    t.equal(year.data.series[0]?.buckets.length, 367)
  })

  t.test('400 VALIDATION_ERROR for a bad window', async (t) => {
    const { admin } = await seeded(app)
    const bad = async (query: Record<string, string>, path: string, why: string) => {
      const res = await call(app, 'getAuthLogStats', admin.cred, { query: unchecked(query) })
      t.equal(res.status, 400, why)
      t.equal(res.code, 'VALIDATION_ERROR', why)
      t.match(res.body.details, [{ path }], why)
    }
    const at = '2020-03-10T00:00:00Z'
    await bad({ from: at, to: at }, 'query.from', 'from equal to to')
    await bad({ from: '2020-03-11T00:00:00Z', to: at }, 'query.from', 'from after to')
    await bad({ from: '2020-03-02T23:59:59Z', to: at }, 'query.from', 'over 7 days by hour')
    await bad({ bucket: 'day', from: '2019-03-09T23:59:59Z', to: at }, 'query.from', 'over 366 days by day')
    await bad({ to: '2020-03-10T23:59:60Z' }, 'query.to', 'a leap second Date cannot hold')
    await bad({ from: 'yesterday' }, 'query.from', 'not a date-time')
    await bad({ bucket: 'week' }, 'query.bucket', 'an unknown bucket')
  })

  t.test('401 without a token, and for a Client Key', async (t) => {
    const tenant = await createTenant(app)
    t.equal((await call(app, 'getAuthLogStats', null, {})).status, 401)
    const key = await keyCred(app, tenant, ['auth:logs'])
    t.equal((await call(app, 'getAuthLogStats', key, {})).status, 401, 'JWT only, as listAuthLogs')
  })

  t.test('403 FORBIDDEN without auth:logs', async (t) => {
    const { tenant } = await seeded(app)
    const plain = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await call(app, 'getAuthLogStats', plain.cred, {})
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
  })
})

t.test('getAuthLogStats: closed hours come from the hourly rollup, counted once', async (t) => {
  const app = await buildTestApp(t)
  const db = (tenant: TenantFx) => app.ctx.dbs.forTenant(tenant.id)
  const rollup = async (tenant: TenantFx) => ({
    mark: await findRollupMark(db(tenant), tenant.id),
    counts: await db(tenant)
      .selectFrom('audit_hourly_counts')
      .select(['hour', 'action', 'success', 'failure'])
      .where('tenant_id', '=', tenant.id)
      .orderBy('hour')
      .orderBy('action')
      .execute(),
  })
  const day = (admin: { cred: As }, from: string, to: string) =>
    call(app, 'getAuthLogStats', admin.cred, { query: { bucket: 'day', from, to } })
  const loginDays = (res: Awaited<ReturnType<typeof day>>) =>
    res.data.series.find((s) => s.action === 'LOGIN')?.buckets.map((b) => [b.success, b.failure])

  t.test('the first call counts the window’s hours; the next ones read them', async (t) => {
    const { tenant, admin } = await seeded(app)
    t.same(await rollup(tenant), { mark: undefined, counts: [] }, 'nothing counted before a call')
    const first = await day(admin, '2020-03-10T00:00:00Z', '2020-03-11T00:00:00Z')
    t.same(loginDays(first), [[2, 2]])
    const { mark, counts } = await rollup(tenant)
    t.same(
      [mark?.covered_from, mark?.covered_to].map((d) => new Date(d as Date).toISOString()),
      ['2020-03-10T00:00:00.000Z', '2020-03-11T00:00:00.000Z'],
    )
    t.same(
      counts.map((c) => [new Date(c.hour).toISOString().slice(11, 13), c.action, c.success, c.failure]),
      [
        ['09', 'LOGIN', 2, 1],
        ['10', 'REFRESH_TOKEN', 1, 0],
        ['11', 'LOGIN', 0, 1],
      ],
      'one row per hour and action; the login stopped at the second factor is not one',
    )
    // A row written into a counted hour now (no transaction of the service lives that long): not recounted.
    await insertRows(app, tenant, [{ action: 'LOGIN', success: true, at: '2020-03-10T09:10:00Z' }])
    t.same(loginDays(await day(admin, '2020-03-10T00:00:00Z', '2020-03-11T00:00:00Z')), [[2, 2]])
  })

  t.test('a window outside the counted range counts the gap too, once', async (t) => {
    const { tenant, admin } = await seeded(app)
    await day(admin, '2020-03-10T00:00:00Z', '2020-03-11T00:00:00Z')
    t.same(loginDays(await day(admin, '2020-03-12T00:00:00Z', '2020-03-13T00:00:00Z')), [[0, 1]])
    t.same(loginDays(await day(admin, '2020-03-08T00:00:00Z', '2020-03-09T00:00:00Z')), [[1, 0]])
    const { mark } = await rollup(tenant)
    t.same(
      [mark?.covered_from, mark?.covered_to].map((d) => new Date(d as Date).toISOString()),
      ['2020-03-08T00:00:00.000Z', '2020-03-13T00:00:00.000Z'],
    )
    t.same(loginDays(await day(admin, '2020-03-08T00:00:00Z', '2020-03-13T00:00:00Z')), [
      [1, 0],
      [0, 0],
      [2, 2],
      [0, 0],
      [0, 1],
    ])
  })

  t.test('the last hour comes from the audit log, and a bucket adds both parts', async (t) => {
    const { tenant, admin } = await seeded(app)
    const now = Date.now()
    const twoHoursAgo = new Date(now - 2 * 3_600_000).toISOString()
    await insertRows(app, tenant, [
      { action: 'LOGOUT', success: true, at: twoHoursAgo },
      { action: 'LOGOUT', success: true, at: new Date(now - 60_000).toISOString() },
    ])
    const res = await call(app, 'getAuthLogStats', admin.cred, { query: { bucket: 'day' } })
    const logout = res.data.series.find((s) => s.action === 'LOGOUT')?.buckets
    t.equal(
      logout?.reduce((n, b) => n + b.success, 0),
      2,
      'the closed hour’s row and the latest one',
    )
    const { mark, counts } = await rollup(tenant)
    t.ok(
      new Date(mark?.covered_to as Date).getTime() <= now - 15 * 60_000,
      'the latest 15 minutes are never counted',
    )
    t.same(
      counts.filter((c) => c.action === 'LOGOUT').map((c) => c.success),
      new Date(twoHoursAgo).getTime() < new Date(mark?.covered_to as Date).getTime() ? [1] : [],
    )
  })

  t.test('retention and relocation drop the counts', async (t) => {
    const { tenant, admin } = await seeded(app)
    await day(admin, '2020-03-08T00:00:00Z', '2020-03-13T00:00:00Z')
    await trimRollups(db(tenant), 1)
    t.same(await rollup(tenant), { mark: undefined, counts: [] }, 'hours older than the period go')
    t.same(loginDays(await day(admin, '2020-03-10T00:00:00Z', '2020-03-11T00:00:00Z')), [[2, 2]], 'recounted')
    await purgeRollups(db(tenant), tenant.id)
    t.same(await rollup(tenant), { mark: undefined, counts: [] }, 'a move leaves no counts behind')
  })
})
