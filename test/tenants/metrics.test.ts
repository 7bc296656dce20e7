import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, userWithToken } from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { call, login } from '../helpers/call.js'

const A = '203.0.113.10'
const B = '203.0.113.20'
const C = '203.0.113.30'

t.test(
  'getTenantMetrics, getSecurityMetrics: after a scripted sequence of logins from known addresses',
  async (t) => {
    const clock = createManualClock()
    const app = await buildTestApp(t, {}, { clock })
    // Why raised: six attempts from one address exceed the default login budget of 5 per minute.
    const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 100 } })
    const other = await createTenant(app, { rateLimits: { loginPerMinute: 100 } })
    const active = await createUser(app, tenant)
    const inactive = await createUser(app, tenant, { status: 'INACTIVE' })
    const outsider = await createUser(app, other)
    const key = await createKey(app, tenant, ['tenants:read'])
    const reader = { key: key.value }

    const empty = await call(app, 'getSecurityMetrics', reader)
    t.equal(empty.status, 200)
    t.same(empty.body.data, {
      last24h: { total: 0, successful: 0, failed: 0, successRate: 0 },
      last5m: { failedAttempts: 0, uniqueIps: 0, possibleBruteForce: false },
      ipAnalysis: { topOffenders: [], suspiciousIps: [] },
    })

    const attempts: Promise<{ status: number }>[] = []
    for (let i = 0; i < 6; i++) attempts.push(login(app, tenant.code, active.email, 'wrong-password', A))
    for (let i = 0; i < 5; i++)
      attempts.push(login(app, tenant.code, `nobody${i}@example.test`, 'whatever', B))
    attempts.push(login(app, tenant.code, inactive.email, undefined, C))
    attempts.push(login(app, tenant.code, active.email, undefined, C))
    attempts.push(login(app, tenant.code, active.email, undefined, C))
    // Another tenant's failures never count here.
    for (let i = 0; i < 3; i++) attempts.push(login(app, other.code, outsider.email, 'wrong-password', A))
    const statuses = (await Promise.all(attempts)).map((r) => r.status)
    t.same(
      statuses.filter((s) => s === 200),
      [200, 200],
    )
    t.notOk(statuses.includes(429), 'no attempt was rate limited')

    await t.test(
      'getSecurityMetrics: 24 h summary, 5-minute window, offenders and suspicious addresses',
      async (t) => {
        const res = await call(app, 'getSecurityMetrics', reader)
        t.equal(res.status, 200)
        const d = res.body.data
        t.same(d.last24h, { total: 14, successful: 2, failed: 12, successRate: 14.29 })
        t.same(d.last5m, { failedAttempts: 12, uniqueIps: 3, possibleBruteForce: true })
        t.same(
          d.ipAnalysis.topOffenders.map((o: { ip: string; failures: number }) => [o.ip, o.failures]),
          [
            [A, 6],
            [B, 5],
            [C, 1],
          ],
        )
        for (const o of d.ipAnalysis.topOffenders) t.ok(Date.parse(o.lastAttemptAt) > 0)
        t.same(d.ipAnalysis.suspiciousIps, [
          { ip: A, failures: 6 },
          { ip: B, failures: 5 },
        ])
      },
    )

    await t.test(
      'getTenantMetrics: users, sessions, roles, custom permissions, active keys, logins',
      async (t) => {
        const db = app.ctx.dbs.main
        await db
          .insertInto('permissions')
          .values({ tenant_id: tenant.id, name: 'reports:read', resource: 'reports', action: 'read' })
          .execute()
        await db.insertInto('roles').values({ tenant_id: tenant.id, name: 'auditor', level: 10 }).execute()
        const revoked = await createKey(app, tenant, ['tenants:read'])
        await db.updateTable('client_keys').set({ status: 'REVOKED' }).where('id', '=', revoked.id).execute()
        await createKey(app, tenant, ['tenants:read'], { expiresAt: new Date(clock.now() - 1000) })
        const res = await call(app, 'getTenantMetrics', reader)
        t.equal(res.status, 200)
        t.same(res.body.data, {
          users: { total: 2, active: 1 },
          sessions: { active: 2 },
          roles: 3,
          customPermissions: 1,
          clientKeys: { active: 1 },
          logins24h: { total: 14, successful: 2, failed: 12 },
        })
      },
    )

    await t.test('the windows follow the clock: 10 minutes later, then a day later', async (t) => {
      clock.advance(10 * 60 * 1000)
      const later = (await call(app, 'getSecurityMetrics', reader)).body.data
      t.same(later.last5m, { failedAttempts: 0, uniqueIps: 0, possibleBruteForce: false })
      t.equal(later.last24h.total, 14)
      t.equal(later.ipAnalysis.suspiciousIps.length, 2)
      clock.advance(24 * 60 * 60 * 1000)
      const dayLater = (await call(app, 'getSecurityMetrics', reader)).body.data
      t.same(dayLater.last24h, { total: 0, successful: 0, failed: 0, successRate: 0 })
      t.same(dayLater.ipAnalysis, { topOffenders: [], suspiciousIps: [] })
      const counts = (await call(app, 'getTenantMetrics', reader)).body.data
      t.same(counts.logins24h, { total: 0, successful: 0, failed: 0 })
    })

    await t.test('403 without tenants:read; 401 without a credential', async (t) => {
      const { cred: as } = await userWithToken(app, tenant, { roles: ['user'] })
      for (const op of ['getTenantMetrics', 'getSecurityMetrics'] as const) {
        const denied = await call(app, op, as)
        t.equal(denied.status, 403)
        t.equal(denied.body.code, 'FORBIDDEN')
        t.equal((await call(app, op)).status, 401)
      }
    })
  },
)

t.test('getSecurityMetrics: possibleBruteForce needs more than 10 failures in 5 minutes', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 100 } })
  const user = await createUser(app, tenant)
  const { cred: as } = await userWithToken(app, tenant, { roles: ['admin'] })
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      login(app, tenant.code, user.email, 'wrong-password', `198.51.100.${i + 1}`),
    ),
  )
  const ten = (await call(app, 'getSecurityMetrics', as)).body.data
  t.same(ten.last5m, { failedAttempts: 10, uniqueIps: 10, possibleBruteForce: false })
  t.same(ten.ipAnalysis.suspiciousIps, [], 'one failure each is not suspicious')
  t.equal(ten.ipAnalysis.topOffenders.length, 10)
  await login(app, tenant.code, user.email, 'wrong-password', '198.51.100.1')
  const eleven = (await call(app, 'getSecurityMetrics', as)).body.data
  t.same(eleven.last5m, { failedAttempts: 11, uniqueIps: 10, possibleBruteForce: true })
  t.same(eleven.ipAnalysis.topOffenders[0], {
    ip: '198.51.100.1',
    failures: 2,
    lastAttemptAt: eleven.ipAnalysis.topOffenders[0]?.lastAttemptAt,
  })
})
