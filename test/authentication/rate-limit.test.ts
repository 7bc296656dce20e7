import t from 'tap'
import { randomUUID } from 'node:crypto'
import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import Fastify from 'fastify'
import rateLimitPlugin from '../../src/plugins/rate-limit.js'
import { LOCAL_MAX_KEYS } from '../../src/lib/rate-limit-store.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { call, callRaw, loginAs, unchecked, type As, type BodyOf } from '../helpers/call.js'
import { createTenant, createUser, freshIp } from '../helpers/fixtures.js'

const loginBody = { tenantCode: 'nobody-here', identifier: 'a@example.test', password: 'whatever-123' }
const login = (app: TestApp, as: As, body: BodyOf<'login'> = loginBody) => call(app, 'login', as, { body })

t.test('login: 429 budget of 5 per minute per IP, the sixth gets 429 with Retry-After', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  const statuses: number[] = []
  let last
  for (let i = 0; i < 6; i++) {
    last = await login(app, { ip })
    statuses.push(last.status)
  }
  t.same(statuses, [404, 404, 404, 404, 404, 429])
  t.same(last?.body, { success: false, error: 'Rate limit exceeded', code: 'RATE_LIMIT_EXCEEDED' })
  const retry = Number(last?.headers['retry-after'])
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
  t.equal(last?.headers['x-ratelimit-limit'], '5')
  const other = await login(app, { ip: freshIp() })
  t.equal(other.status, 404, 'another IP has its own budget')
  const again = await login(app, { ip })
  t.equal(again.status, 429, 'retrying sooner is denied again')
})

t.test('X-Forwarded-For decides the bucket only from trusted proxies', async (t) => {
  const app = await buildTestApp(t)
  for (let i = 0; i < 5; i++) await loginVia(app, '198.51.100.7')
  t.equal(await loginVia(app, '198.51.100.7'), 429, 'the forwarded client is limited')
  t.equal(await loginVia(app, '198.51.100.8'), 404, 'another forwarded client is not')
})

t.test('global budget: 100 per minute per IP across routes, 404s included', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  let last
  for (let i = 0; i < 100; i++) {
    last = i % 2 ? await call(app, 'getHealth', { ip }) : await callRaw(app, 'GET', '/api/v1/unknown', { ip })
  }
  t.not(last?.status, 429)
  t.equal(last?.headers['x-ratelimit-remaining'], '0')
  const over = await call(app, 'getMe', { ip })
  t.equal(over.status, 429, 'authenticated and unauthenticated traffic share the bucket')
  t.ok(over.headers['retry-after'])
})

t.test('a tenant with raised budgets gets them', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 8, requestsPerMinute: null } })
  const user = await createUser(app, tenant)
  const ip = freshIp()
  const statuses: number[] = []
  for (let i = 0; i < 9; i++) {
    const res = await loginAs(app, user, { password: 'wrong-pass-1', ip })
    statuses.push(res.status)
  }
  t.same(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 429])
})

/** Heap in use after a full collection. */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** One POST /login from `client`, relayed by a proxy on loopback (the test apps trust loopback: TEST_ENV). */
async function loginVia(app: TestApp, client: string, body: BodyOf<'login'> = loginBody) {
  return (await login(app, { ip: '127.0.0.1', headers: { 'x-forwarded-for': client } }, body)).status
}

t.test('login: 429 budget, IPv6 clients share one budget per /64', async (t) => {
  const app = await buildTestApp(t)
  const statuses: number[] = []
  for (let i = 1; i <= 12; i++) {
    // Twelve distinct addresses of 2001:db8:1:2::/64, spread over its interface identifiers.
    statuses.push(await loginVia(app, `2001:db8:1:2:${(i * 0x1111).toString(16)}::${i}`))
  }
  t.same(statuses, [404, 404, 404, 404, 404, 429, 429, 429, 429, 429, 429, 429], 'one budget for the /64')
  t.equal(await loginVia(app, '2001:db8:1:2:ffff::9'), 429, 'another address of it is limited too')
  t.equal(await loginVia(app, '2001:db8:1:3::1'), 404, 'the next /64 has its own budget')
  t.equal(await loginVia(app, '2001:db8:1:3::2'), 404)
})

t.test('login: 429 budget, an IPv4-mapped IPv6 address is the same client as its IPv4', async (t) => {
  const app = await buildTestApp(t)
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push(await loginVia(app, i % 2 ? '::ffff:203.0.113.5' : '203.0.113.5'))
  t.same(statuses, [404, 404, 404, 404, 404, 429], 'one budget for both spellings')
  t.equal(await loginVia(app, '203.0.113.6'), 404, 'IPv4 neighbours keep their own budgets')
  t.equal(await loginVia(app, '::ffff:203.0.113.7'), 404)
})

t.test('global budget and tenant-raised budgets also count IPv6 per /64', async (t) => {
  const app = await buildTestApp(t)
  let last
  for (let i = 0; i < 100; i++) {
    last = await callRaw(app, 'GET', '/api/v1/unknown', {
      ip: '127.0.0.1',
      headers: { 'x-forwarded-for': `2001:db8:aa:1::${(i + 1).toString(16)}` },
    })
  }
  t.equal(last?.headers['x-ratelimit-remaining'], '0')
  const over = await callRaw(app, 'GET', '/api/v1/unknown', {
    ip: '127.0.0.1',
    headers: { 'x-forwarded-for': '2001:db8:aa:1:1234::1' },
  })
  t.equal(over.status, 429, 'the 101st request from the /64 is refused')

  const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 8, requestsPerMinute: null } })
  const user = await createUser(app, tenant)
  const statuses: number[] = []
  for (let i = 1; i <= 9; i++) {
    statuses.push(
      await loginVia(app, `2001:db8:bb:1::${i}`, {
        tenantCode: tenant.code,
        identifier: user.email,
        password: 'wrong-pass-1',
      }),
    )
  }
  t.same(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 429], "the tenant's 8 per /64")
})

t.test('login: 429 budget, a flood of 10,000 new addresses does not reset a limited address', async (t) => {
  const app = await buildTestApp(t)
  const limited = '198.51.100.23'
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push(await loginVia(app, limited))
  t.same(statuses, [404, 404, 404, 404, 404, 429], 'limited before the flood')
  // Why an empty body: the budget is counted before validation, so each request costs only its 400.
  const started = performance.now()
  const before = heapAfterGc()
  let counted = 0
  for (let i = 0; i < 10_000; i++) {
    const res = await login(app, { ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }, unchecked({}))
    if (res.status === 400) counted++
  }
  const ms = performance.now() - started
  const after = heapAfterGc()
  t.equal(counted, 10_000, 'every flooding address got its own first request')
  t.comment(
    `10,000 addresses through the app in ${ms.toFixed(0)} ms; heap after gc ` +
      `${((after - before) / 1048576).toFixed(1)} MiB larger (the local store holds 10,001 login keys)`,
  )
  t.equal(await loginVia(app, limited), 429, 'still limited after the flood')
  t.equal(await loginVia(app, '::ffff:198.51.100.23'), 429, 'under either spelling')
})

t.test('local store at its bound: new addresses share one overflow budget', async (t) => {
  t.ok(LOCAL_MAX_KEYS >= 10_000, `the bound (${LOCAL_MAX_KEYS}) holds a 10,000-address flood`)
  // A bare instance with the plugin alone, so the bound can be made small.
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  await app.register(rateLimitPlugin, { localMaxKeys: 20 })
  app.get('/', async (req, reply) => {
    await app.checkRateLimit(req, reply, 'login', 5)
    return 'ok'
  })
  const hit = async (ip: string) =>
    (await app.inject({ method: 'GET', url: '/', remoteAddress: ip })).statusCode
  const first = '192.0.2.1'
  t.equal(await hit(first), 200)
  for (let i = 2; i <= 20; i++) t.equal(await hit(`192.0.2.${i}`), 200)
  const newcomers: number[] = []
  for (let i = 1; i <= 8; i++) newcomers.push(await hit(`198.51.100.${i}`))
  t.same(newcomers, [200, 200, 200, 200, 200, 429, 429, 429], 'eight newcomers share one budget of 5')
  t.equal(await hit('2001:db8:77::1'), 429, 'so does any further newcomer')
  const own: number[] = []
  for (let i = 0; i < 5; i++) own.push(await hit(first))
  t.same(own, [200, 200, 200, 200, 429], 'an address counted before keeps its own budget')
})

const redisUrl = process.env.TEST_REDIS_URL
t.test(
  'with Redis, two instances share one login budget',
  { skip: redisUrl ? false : 'TEST_REDIS_URL not set' },
  async (t) => {
    const namespace = `t-${randomUUID()}:`
    const a = await buildTestApp(t, { REDIS_URL: redisUrl as string, REDIS_KEY_PREFIX: namespace })
    const b = await buildTestApp(t, { REDIS_URL: redisUrl as string, REDIS_KEY_PREFIX: namespace })
    await new Promise((r) => setTimeout(r, 300))
    const health = await call(a, 'getHealth')
    t.equal(health.data.redis.status, 'up')
    const ip = freshIp()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const app = i % 2 ? b : a
      statuses.push((await login(app, { ip })).status)
    }
    t.same(statuses, [404, 404, 404, 404, 404, 429])
  },
)

t.test('Redis unreachable: local counters, health degraded, requests not refused', async (t) => {
  const app = await buildTestApp(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  const health = await call(app, 'getHealth')
  t.equal(health.status, 200)
  t.equal(health.data.status, 'degraded')
  t.equal(health.data.redis.status, 'down')
  const ip = freshIp()
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    statuses.push((await login(app, { ip })).status)
  }
  t.same(statuses, [404, 404, 404, 404, 404, 429], 'the local budget still applies')
})

t.test('429 writes no audit row', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const ip = freshIp()
  for (let i = 0; i < 7; i++) {
    await loginAs(app, user, { ip, password: i === 6 ? undefined : 'bad-password' })
  }
  const rows = await app.ctx.dbs.main
    .selectFrom('tessera_audit.audit_log')
    .select('id')
    .where('tenant_id', '=', tenant.id)
    .execute()
  t.equal(rows.length, 5)
})
