import t from 'tap'
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../../src/config.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import { auditRows, createTenant, createUser, freshIp } from '../helpers/fixtures.js'

// Contract section 22, "Client addresses": whose X-Forwarded-For is believed (TRUST_PROXY), the balancers'
// /health outside every budget, and REDIS_KEY_PREFIX. WORKERS without Redis: test/system/workers.test.ts.

/** One POST /login with a wrong password, sent from `remoteAddress` with this X-Forwarded-For. */
async function wrongLogin(
  app: TestApp,
  code: string,
  email: string,
  remoteAddress: string,
  forwarded: string,
) {
  const res = await call(
    app,
    'login',
    { ip: remoteAddress, headers: { 'x-forwarded-for': forwarded } },
    { body: { tenantCode: code, identifier: email, password: 'Wrong-password-123' } },
  )
  return res.status
}

t.test('TRUST_PROXY is validated and defaults to trusting nobody', async (t) => {
  t.equal(loadConfig({}).trustProxy, false, 'unset: no proxy is trusted')
  t.equal(loadConfig({ TRUST_PROXY: '' }).trustProxy, false, 'empty is unset')
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true)
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
  t.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, '10.0.0.0/8, 127.0.0.1')
})

t.test(
  'login: TRUST_PROXY unset, a spoofed X-Forwarded-For from loopback buys no fresh budget',
  async (t) => {
    // Why '' : the test helpers trust loopback (TEST_ENV); '' is the variable unset.
    const app = await buildTestApp(t, { TRUST_PROXY: '' })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      statuses.push(await wrongLogin(app, tenant.code, user.email, '127.0.0.1', `198.51.100.${i + 1}`))
    }
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429], 'one budget: the socket')
    const rows = await auditRows(app, tenant.id, 'LOGIN')
    t.equal(rows.length, 5, 'the five answered attempts are audited (a 429 writes none)')
    t.same(
      rows.map((r) => r.ip_address),
      Array(5).fill('127.0.0.1'),
      "the audit rows carry the socket's address, not the forged one",
    )
  },
)

t.test('login: TRUST_PROXY=true believes every hop', async (t) => {
  const app = await buildTestApp(t, { TRUST_PROXY: 'true' })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const sender = freshIp()
  const statuses: number[] = []
  for (let i = 0; i < 7; i++) {
    statuses.push(await wrongLogin(app, tenant.code, user.email, sender, `203.0.113.${i + 1}`))
  }
  t.same(statuses, Array(7).fill(401), 'each forwarded client has its own budget, from any sender')
  const rows = await auditRows(app, tenant.id, 'LOGIN')
  t.equal(rows[0]?.ip_address, '203.0.113.1', 'the forwarded address is recorded')
})

t.test('login: a TRUST_PROXY list believes only the hops it names', async (t) => {
  const app = await buildTestApp(t, { TRUST_PROXY: '10.20.0.0/16' })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const fromBalancer: number[] = []
  for (let i = 0; i < 6; i++) {
    fromBalancer.push(await wrongLogin(app, tenant.code, user.email, '10.20.3.4', `203.0.113.${i + 1}`))
  }
  t.same(fromBalancer, Array(6).fill(401), 'behind the listed balancer each client has its own budget')
  const fromLoopback: number[] = []
  for (let i = 0; i < 6; i++) {
    fromLoopback.push(await wrongLogin(app, tenant.code, user.email, '127.0.0.1', `198.51.100.${i + 1}`))
  }
  t.same(fromLoopback, [401, 401, 401, 401, 401, 429], 'loopback is not in the list: its header is ignored')
  const ips = (await auditRows(app, tenant.id, 'LOGIN')).map((r) => r.ip_address)
  t.equal(ips[0], '203.0.113.1')
  t.equal(ips[ips.length - 1], '127.0.0.1')
})

t.test('getHealthRoot: GET /health is counted against no per-IP budget', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  for (let i = 0; i < 150; i++) {
    const res = await call(app, 'getHealthRoot', { ip })
    if (res.status !== 200) return t.fail(`probe ${i + 1}: ${res.status}`)
    if (res.headers['x-ratelimit-limit'] !== undefined) return t.fail('a counted request carries the headers')
  }
  t.pass('150 probes a minute from one address, all 200, none counted')
  const refused = await call(app, 'getHealthRoot', { ip }, { query: unchecked({ x: 1 }) })
  t.equal(refused.status, 400, 'a refused probe is not counted either')
  t.equal(refused.headers['x-ratelimit-limit'], undefined)
  const api = await call(app, 'getHealth', { ip })
  t.equal(api.status, 200)
  t.equal(api.headers['x-ratelimit-remaining'], '99', "the probes spent none of the address's global budget")
})

t.test('getHealth: GET /api/v1/health stays counted: 429 past the global budget', async (t) => {
  const app = await buildTestApp(t)
  const ip = freshIp()
  let last = 0
  for (let i = 0; i < 101; i++) {
    last = (await call(app, 'getHealth', { ip })).status
  }
  t.equal(last, 429, 'the 101st request of the minute is refused')
  const root = await call(app, 'getHealthRoot', { ip })
  t.equal(root.status, 200, 'the balancers’ probe still answers from that address')
})

t.test('REDIS_KEY_PREFIX is validated and defaults to tessera:', async (t) => {
  t.equal(loadConfig({}).redisKeyPrefix, 'tessera:')
  t.equal(loadConfig({ REDIS_KEY_PREFIX: 'blue:' }).redisKeyPrefix, 'blue:')
  t.throws(() => loadConfig({ REDIS_KEY_PREFIX: 'two words' }), /REDIS_KEY_PREFIX must be/)
  t.throws(() => loadConfig({ REDIS_KEY_PREFIX: 'x'.repeat(65) }), /REDIS_KEY_PREFIX must be/)
})

const redisUrl = process.env.TEST_REDIS_URL
t.test(
  'REDIS_KEY_PREFIX: two deployments on one Redis share no counters, two instances of one do',
  { skip: redisUrl ? false : 'TEST_REDIS_URL not set' },
  async (t) => {
    const blue = `t-blue-${randomUUID()}:`
    const green = `t-green-${randomUUID()}:`
    const env = (prefix: string) => ({ REDIS_URL: redisUrl as string, REDIS_KEY_PREFIX: prefix })
    const blue1 = await buildTestApp(t, env(blue))
    const blue2 = await buildTestApp(t, env(blue))
    const green1 = await buildTestApp(t, env(green))
    await new Promise((r) => setTimeout(r, 300))
    t.equal((await call(blue1, 'getHealth')).data.redis.status, 'up')
    // Each app has a database of its own, so a tenant no app knows: 404, counted all the same.
    const ip = freshIp()
    const login = (app: TestApp) => wrongLogin(app, 'nobody-here', 'nobody@example.test', ip, ip)
    const blueStatuses: number[] = []
    for (let i = 0; i < 6; i++) blueStatuses.push(await login(i % 2 ? blue2 : blue1))
    t.same(blueStatuses, [404, 404, 404, 404, 404, 429], 'one prefix: one budget across its instances')
    t.equal(await login(green1), 404, 'another prefix: its own counters on the same Redis')
    // Lockout on, so the account throttle writes to Redis too.
    const tenant = await createTenant(blue1, {
      lockout: { enabled: true, threshold: 50, windowSeconds: 60, baseSeconds: 60, maxSeconds: 60 },
    })
    t.equal(await wrongLogin(blue1, tenant.code, 'nobody@example.test', freshIp(), ''), 401)

    // The keys written carry the prefix: the rate limits' and the account throttle's.
    const { Redis } = await import('ioredis')
    const r = new Redis(redisUrl as string)
    t.teardown(() => r.disconnect())
    const blueKeys = await r.keys(`${blue}*`)
    t.ok(
      blueKeys.some((k) => k.startsWith(`${blue}rl:`)),
      `rate-limit keys under ${blue}`,
    )
    t.ok(
      blueKeys.some((k) => k.startsWith(`${blue}lockout:`)),
      `account-throttle keys under ${blue}`,
    )
    t.ok((await r.keys(`${green}*`)).length > 0, 'and the other deployment’s under its own')
  },
)
