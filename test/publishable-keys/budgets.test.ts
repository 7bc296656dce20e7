import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, twoInstances } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { freshIp } from '../helpers/fixtures.js'
import { PK_ENV, pk, signupWith, solvedChallenge, tenantWithKey } from './support.js'

// The sign-up budgets (contract section 20): 10 per hour per client address (an IPv6 /64), and the
// key's signupsPerHour, shared by every instance (the lockout's counters: Redis, else the database).

const PASSWORD = 'Signup-pass-1'
const email = () => `b-${Math.random().toString(36).slice(2, 10)}@example.test`

async function spend(app: FastifyInstance, key: string, ip: string, n: number) {
  const statuses: number[] = []
  for (let i = 0; i < n; i++)
    statuses.push(
      (await signupWith(app, key, { email: email(), password: PASSWORD }, pk(key, undefined, ip))).status,
    )
  return statuses
}

t.test('signup: the hourly budgets', async (t) => {
  const app = await buildTestApp(t, PK_ENV)

  t.test('signup: 429 with Retry-After past 10 sign-ups from one address', async (t) => {
    const { key } = await tenantWithKey(app)
    const ip = freshIp()
    t.same(await spend(app, key.key, ip, 10), Array(10).fill(201))
    const over = await signupWith(
      app,
      key.key,
      { email: email(), password: PASSWORD },
      pk(key.key, undefined, ip),
    )
    t.equal(over.status, 429)
    t.equal(over.code, 'RATE_LIMIT_EXCEEDED')
    const retry = Number(over.headers['retry-after'])
    t.ok(retry > 3500 && retry <= 3600, `Retry-After ${retry}`)
    const other = await signupWith(app, key.key, { email: email(), password: PASSWORD })
    t.equal(other.status, 201, 'another address has its own budget')
  })

  t.test('signup: one IPv6 /64 is one address', async (t) => {
    const { key } = await tenantWithKey(app)
    const base = '2001:db8:77:1'
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) {
      const ip = `${base}::${(i + 1).toString(16)}`
      statuses.push(
        (await signupWith(app, key.key, { email: email(), password: PASSWORD }, pk(key.key, undefined, ip)))
          .status,
      )
    }
    t.same(statuses, [...Array(10).fill(201), 429])
  })

  t.test('signup: 429 past the key’s signupsPerHour, whatever the address', async (t) => {
    const { key } = await tenantWithKey(app, { signupsPerHour: 2 })
    t.same(await spend(app, key.key, freshIp(), 1), [201])
    t.same(await spend(app, key.key, freshIp(), 1), [201])
    const over = await signupWith(app, key.key, { email: email(), password: PASSWORD })
    t.equal(over.status, 429)
    t.ok(Number(over.headers['retry-after']) >= 1)
  })
})

const pgUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL

for (const shared of ['postgres', 'redis'] as const) {
  t.test(
    `signup: two instances share the budgets and the used solutions (${shared})`,
    {
      skip: !pgUrl
        ? 'TEST_DATABASE_URL not set: two instances need one PostgreSQL'
        : shared === 'redis' && !redisUrl
          ? 'TEST_REDIS_URL not set'
          : false,
    },
    async (t) => {
      const prefix = `pk-${Math.random().toString(36).slice(2, 10)}:`
      const env: Record<string, string> = { ...PK_ENV }
      if (shared === 'redis' && redisUrl)
        Object.assign(env, { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix })
      const { one, two } = await twoInstances(t, env)
      const { key } = await tenantWithKey(one, { signupsPerHour: 1000 })
      const ip = freshIp()
      const first = await spend(one, key.key, ip, 5)
      const second = await spend(two, key.key, ip, 5)
      t.same([...first, ...second], Array(10).fill(201))
      const over = await signupWith(
        one,
        key.key,
        { email: email(), password: PASSWORD },
        pk(key.key, undefined, ip),
      )
      t.equal(over.status, 429, 'the 11th from one address, on either instance')

      const limited = await tenantWithKey(one, { signupsPerHour: 2 })
      t.same(await spend(one, limited.key.key, freshIp(), 1), [201])
      t.same(await spend(two, limited.key.key, freshIp(), 1), [201])
      t.same(await spend(one, limited.key.key, freshIp(), 1), [429], 'the key’s budget across instances')

      const altcha = await solvedChallenge(one, key.key)
      const body = (e: string) => ({ email: e, password: PASSWORD, altcha })
      const used = await Promise.all([
        call(one, 'signup', pk(key.key), { body: body(email()) }),
        call(two, 'signup', pk(key.key), { body: body(email()) }),
        call(two, 'signup', pk(key.key), { body: body(email()) }),
      ])
      t.same(used.map((r) => r.status).sort(), [201, 400, 400], 'one solution, once, across instances')
    },
  )
}
