import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, freshIp, PASSWORD } from '../helpers/fixtures.js'

const loginBody = { tenantCode: 'nobody-here', identifier: 'a@example.test', password: 'whatever-123' }

t.test('login budget: 5 per minute per IP, the sixth gets 429 with Retry-After', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  const statuses: number[] = []
  let last
  for (let i = 0; i < 6; i++) {
    last = await app.inject({ method: 'POST', url: '/api/v1/login', remoteAddress: ip, payload: loginBody })
    statuses.push(last.statusCode)
  }
  t.same(statuses, [404, 404, 404, 404, 404, 429])
  t.same(last?.json(), { success: false, error: 'Rate limit exceeded', code: 'RATE_LIMIT_EXCEEDED' })
  const retry = Number(last?.headers['retry-after'])
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  t.equal(last?.headers['x-ratelimit-limit'], '5')
  const other = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: freshIp(),
    payload: loginBody,
  })
  t.equal(other.statusCode, 404, 'another IP has its own budget')
  const again = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: ip,
    payload: loginBody,
  })
  t.equal(again.statusCode, 429, 'retrying sooner is denied again')
})

t.test('X-Forwarded-For decides the bucket only from trusted proxies', async (t) => {
  const app = await buildTestApp(t)
  for (let i = 0; i < 5; i++) {
    await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '198.51.100.7' },
      payload: loginBody,
    })
  }
  const sameClient = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': '198.51.100.7' },
    payload: loginBody,
  })
  t.equal(sameClient.statusCode, 429, 'the forwarded client is limited')
  const otherClient = await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': '198.51.100.8' },
    payload: loginBody,
  })
  t.equal(otherClient.statusCode, 404, 'another forwarded client is not')
})

t.test('global budget: 100 per minute per IP across routes, 404s included', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  let last
  for (let i = 0; i < 100; i++) {
    last = await app.inject({
      method: 'GET',
      url: i % 2 ? '/api/v1/health' : '/api/v1/unknown',
      remoteAddress: ip,
    })
  }
  t.not(last?.statusCode, 429)
  t.equal(last?.headers['x-ratelimit-remaining'], '0')
  const over = await app.inject({ method: 'GET', url: '/api/v1/me', remoteAddress: ip })
  t.equal(over.statusCode, 429, 'authenticated and unauthenticated traffic share the bucket')
  t.ok(over.headers['retry-after'])
})

t.test('a tenant with raised budgets gets them', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 8, requestsPerMinute: null } })
  const user = await createUser(app, tenant)
  const ip = freshIp()
  const statuses: number[] = []
  for (let i = 0; i < 9; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      remoteAddress: ip,
      payload: { tenantCode: tenant.code, identifier: user.email, password: 'wrong-pass-1' },
    })
    statuses.push(res.statusCode)
  }
  t.same(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 429])
})

const redisUrl = process.env.TEST_REDIS_URL
t.test(
  'with Redis, two instances share one login budget',
  { skip: redisUrl ? false : 'TEST_REDIS_URL not set' },
  async (t) => {
    const namespace = `t-${randomUUID()}:`
    const a = await buildTestApp(t, { REDIS_URL: redisUrl as string }, { rateLimitNamespace: namespace })
    const b = await buildTestApp(t, { REDIS_URL: redisUrl as string }, { rateLimitNamespace: namespace })
    await new Promise((r) => setTimeout(r, 300))
    const health = await a.inject({ method: 'GET', url: '/api/v1/health' })
    t.equal(health.json().data.redis.status, 'up')
    const ip = freshIp()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const app = i % 2 ? b : a
      statuses.push(
        (await app.inject({ method: 'POST', url: '/api/v1/login', remoteAddress: ip, payload: loginBody }))
          .statusCode,
      )
    }
    t.same(statuses, [404, 404, 404, 404, 404, 429])
  },
)

t.test('Redis unreachable: local counters, health degraded, requests not refused', async (t) => {
  const app = await buildTestApp(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  const health = await app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(health.statusCode, 200)
  t.equal(health.json().data.status, 'degraded')
  t.equal(health.json().data.redis.status, 'down')
  const ip = freshIp()
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    statuses.push(
      (await app.inject({ method: 'POST', url: '/api/v1/login', remoteAddress: ip, payload: loginBody }))
        .statusCode,
    )
  }
  t.same(statuses, [404, 404, 404, 404, 404, 429], 'the local budget still applies')
})

t.test('429 writes no audit row', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const ip = freshIp()
  for (let i = 0; i < 7; i++) {
    await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      remoteAddress: ip,
      payload: {
        tenantCode: tenant.code,
        identifier: user.email,
        password: i === 6 ? PASSWORD : 'bad-password',
      },
    })
  }
  const rows = await app.ctx.dbs.main
    .selectFrom('audit_log')
    .select('id')
    .where('tenant_id', '=', tenant.id)
    .execute()
  t.equal(rows.length, 5)
})
