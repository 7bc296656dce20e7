import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildAppOn, buildTestApp } from '../helpers/app.js'
import { call, login } from '../helpers/call.js'
import { createTestDatabaseUrl, defaultBackend } from '../helpers/db.js'
import {
  auditRows,
  createTenant,
  createUser,
  keyCred,
  PASSWORD,
  tokenFor,
  UNKNOWN_ID,
  userRow,
} from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { nextThrottle } from '../../src/modules/account/lockout.js'

// Account throttling (auth_config.lockout, openapi/components/auth-config.yaml) and unlockUser.

const LOCKOUT = { enabled: true, threshold: 3, windowSeconds: 60, baseSeconds: 60, maxSeconds: 200 }
const WRONG = 'Wrong-password-17'

/** Counts bcrypt compares (real and dummy) made by the app's hasher from now on. */
function countCompares(app: FastifyInstance): { readonly n: number; reset(): void } {
  const hasher = app.ctx.hasher as {
    verify: typeof app.ctx.hasher.verify
    dummyVerify: typeof app.ctx.hasher.dummyVerify
  }
  let n = 0
  const verify = hasher.verify.bind(hasher)
  const dummy = hasher.dummyVerify.bind(hasher)
  hasher.verify = (...args) => {
    n++
    return verify(...args)
  }
  hasher.dummyVerify = (...args) => {
    n++
    return dummy(...args)
  }
  return {
    get n() {
      return n
    },
    reset() {
      n = 0
    },
  }
}

t.test('login: account throttling under a manual clock', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app, { lockout: LOCKOUT })
  const compares = countCompares(app)
  const fail = (identifier: string) => login(app, tenant.code, identifier, WRONG)

  t.test('known and unknown identifiers lock alike: same status, Retry-After, no bcrypt', async (t) => {
    const user = await createUser(app, tenant)
    const unknown = `nobody-${randomUUID().slice(0, 8)}@example.test`
    for (const identifier of [user.email, unknown]) {
      for (let i = 1; i <= 3; i++) {
        const r = await fail(identifier)
        t.equal(r.code, 'INVALID_CREDENTIALS', `failure ${i} is answered as a failure, from a fresh address`)
      }
    }
    const answers = []
    for (const identifier of [user.email, unknown, user.email.toUpperCase()]) {
      compares.reset()
      const r = await login(app, tenant.code, identifier, PASSWORD)
      answers.push({ status: r.status, code: r.code, retryAfter: r.headers['retry-after'], body: r.raw })
      t.equal(compares.n, 0, `${identifier}: a locked login costs no bcrypt compare`)
    }
    t.equal(answers[0]?.status, 429)
    t.equal(answers[0]?.code, 'RATE_LIMIT_EXCEEDED')
    t.equal(answers[0]?.retryAfter, '60')
    t.equal(JSON.parse(answers[0]?.body ?? '{}').error, 'Rate limit exceeded', 'the contract’s error text')
    t.same(answers[1], answers[0], 'the unknown identifier gets the same answer')
    t.same(answers[2], answers[0], 'the identifier is normalised (case)')
    const locked = await auditRows(app, tenant.id, 'ACCOUNT_LOCKED')
    t.ok(
      locked.some((r) => r.user_id === user.id && r.success),
      'ACCOUNT_LOCKED row names the known user',
    )
    t.ok(
      locked.some((r) => r.user_id === null),
      'and one for the unknown identifier',
    )
  })

  t.test('unknown identifiers that are not locked still pay the dummy compare', async (t) => {
    compares.reset()
    const r = await fail(`other-${randomUUID().slice(0, 8)}@example.test`)
    t.equal(r.status, 401)
    t.equal(compares.n, 1)
  })

  t.test('locks double from baseSeconds up to maxSeconds, and a success starts over', async (t) => {
    const user = await createUser(app, tenant)
    const lockWith = async () => {
      for (let i = 0; i < 3; i++) t.equal((await fail(user.email)).status, 401)
      const r = await login(app, tenant.code, user.email, PASSWORD)
      t.equal(r.status, 429)
      return Number(r.headers['retry-after'])
    }
    t.equal(await lockWith(), 60, 'first lock: baseSeconds')
    clock.advance(59_000)
    t.equal((await login(app, tenant.code, user.email, PASSWORD)).headers['retry-after'], '1', 'counts down')
    clock.advance(1_000)
    t.equal(await lockWith(), 120, 'second lock doubles')
    clock.advance(120_000)
    t.equal(await lockWith(), 200, 'third lock: capped at maxSeconds')
    clock.advance(200_000)
    t.equal((await login(app, tenant.code, user.email, PASSWORD)).status, 200, 'the lock ends on time')
    t.equal(await lockWith(), 60, 'a success reset the doubling')
  })

  t.test('failures outside the window do not add up', async (t) => {
    const user = await createUser(app, tenant)
    for (let i = 0; i < 5; i++) {
      t.equal((await fail(user.email)).status, 401)
      t.equal((await fail(user.email)).status, 401)
      clock.advance(61_000)
    }
    t.equal((await login(app, tenant.code, user.email, PASSWORD)).status, 200)
  })

  t.test('a success resets the failure count', async (t) => {
    const user = await createUser(app, tenant)
    await fail(user.email)
    await fail(user.email)
    t.equal((await login(app, tenant.code, user.email, PASSWORD)).status, 200)
    await fail(user.email)
    await fail(user.email)
    t.equal(
      (await login(app, tenant.code, user.email, PASSWORD)).status,
      200,
      'still two failures from locking',
    )
  })

  t.test('off by default: nothing is counted', async (t) => {
    const plain = await createTenant(app)
    const user = await createUser(app, plain)
    for (let i = 0; i < 12; i++) await login(app, plain.code, user.email, WRONG)
    t.equal((await login(app, plain.code, user.email, PASSWORD)).status, 200)
    const rows = await app.ctx.dbs.main
      .selectFrom('login_throttle')
      .select('identifier')
      .where('tenant_id', '=', plain.id)
      .execute()
    t.same(rows, [], 'no counter row for a tenant without lockout')
  })
})

t.test('unlockUser: POST /users/:userId/unlock', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { lockout: LOCKOUT, loginIdentifiers: ['email', 'username'] })
  const admin = await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] }))
  const lock = async (identifier: string) => {
    for (let i = 0; i < 3; i++) await login(app, tenant.code, identifier, WRONG)
  }

  t.test('unlockUser: 200 lifts the lock of every identifier of the user, with an audit row', async (t) => {
    const user = await createUser(app, tenant, { roles: ['user'], username: `u${randomUUID().slice(0, 6)}` })
    const username = (await userRow(app, tenant.id, user.id)).username as string
    await lock(user.email)
    await lock(username.toUpperCase())
    t.equal((await login(app, tenant.code, user.email)).status, 429)
    t.equal((await login(app, tenant.code, username)).status, 429)
    const r = await call(app, 'unlockUser', { token: admin }, { params: { userId: user.id } })
    t.equal(r.status, 200)
    t.same(r.data, { unlocked: true })
    t.equal((await login(app, tenant.code, user.email)).status, 200)
    t.equal((await login(app, tenant.code, username)).status, 200)
    const rows = await auditRows(app, tenant.id, 'ACCOUNT_UNLOCKED')
    t.ok(rows.some((x) => x.success && x.user_id === user.id && x.actor_type === 'user'))
  })

  t.test('unlockUser: 200 for a user that is not locked, and with a Client Key', async (t) => {
    const user = await createUser(app, tenant, { roles: ['user'] })
    const key = await keyCred(app, tenant, ['users:update', 'users:read'])
    const r = await call(app, 'unlockUser', key, { params: { userId: user.id }, body: {} })
    t.equal(r.status, 200)
    const rows = await auditRows(app, tenant.id, 'ACCOUNT_UNLOCKED')
    t.ok(rows.some((x) => x.success && x.user_id === user.id && x.actor_type === 'client_key'))
  })

  t.test('unlockUser: 404 USER_NOT_FOUND for an unknown user and another tenant’s', async (t) => {
    const other = await createUser(app, await createTenant(app))
    for (const id of [UNKNOWN_ID, other.id]) {
      const r = await call(app, 'unlockUser', { token: admin }, { params: { userId: id } })
      t.equal(r.status, 404)
      t.equal(r.code, 'USER_NOT_FOUND')
    }
    const rows = await auditRows(app, tenant.id, 'ACCOUNT_UNLOCKED')
    t.ok(
      rows.some((x) => !x.success && x.error_message === 'USER_NOT_FOUND'),
      'a failure row',
    )
  })

  t.test(
    'unlockUser: 403 ROLE_HIERARCHY_VIOLATION for an admin on another admin; the lock stays',
    async (t) => {
      const peer = await createUser(app, tenant, { roles: ['admin'] })
      await lock(peer.email)
      const r = await call(app, 'unlockUser', { token: admin }, { params: { userId: peer.id } })
      t.equal(r.status, 403)
      t.equal(r.code, 'ROLE_HIERARCHY_VIOLATION')
      t.equal((await login(app, tenant.code, peer.email)).status, 429)
    },
  )
})

t.test('nextThrottle: the rule on its own', async (t) => {
  const cfg = { enabled: true, threshold: 2, windowSeconds: 10, baseSeconds: 5, maxSeconds: 30 }
  const one = nextThrottle(null, cfg, 1000)
  t.same(one, {
    record: { failures: 1, windowStartedAt: 1000, lockedUntil: null, locks: 0 },
    lockedSeconds: null,
  })
  const two = nextThrottle(one.record, cfg, 2000)
  t.equal(two.lockedSeconds, 5)
  t.same(
    nextThrottle(two.record, cfg, 3000),
    { record: two.record, lockedSeconds: null },
    'locked: unchanged',
  )
  const stale = nextThrottle({ ...two.record, locks: 3 }, cfg, 2000 + 10_000 + 30_000 + 1)
  t.same(stale.record.locks, 0, 'a record idle past maxSeconds forgets its doubling')
})

const redisUrl = process.env.TEST_REDIS_URL

t.test('login: throttling fails open when Redis does not answer; health says degraded', async (t) => {
  const app = await buildTestApp(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  const tenant = await createTenant(app, { lockout: LOCKOUT })
  const user = await createUser(app, tenant)
  for (let i = 0; i < 5; i++) t.equal((await login(app, tenant.code, user.email, WRONG)).status, 401)
  t.equal((await login(app, tenant.code, user.email)).status, 200, 'nothing could be counted; logins go on')
  const health = await call(app, 'getHealth')
  t.equal(health.data.status, 'degraded')
  const admin = await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] }))
  const r = await call(app, 'unlockUser', { token: admin }, { params: { userId: user.id } })
  t.equal(r.status, 503, 'an unlock that cannot reach the counters says so')
})

t.test(
  'login: two instances on one PostgreSQL and one Redis share the lock',
  {
    skip:
      defaultBackend() !== 'postgres' || !redisUrl
        ? 'needs TEST_BACKEND=postgres and TEST_REDIS_URL (two instances need one database)'
        : false,
  },
  async (t) => {
    const { url, drop } = await createTestDatabaseUrl('postgres')
    t.teardown(drop)
    const namespace = `t-${randomUUID()}:`
    const env = { DATABASE_URL: url, REDIS_URL: redisUrl as string, REDIS_KEY_PREFIX: namespace }
    const one = await buildAppOn(env)
    t.teardown(() => one.close())
    const two = await buildAppOn(env)
    t.teardown(() => two.close())
    const tenant = await createTenant(one, { lockout: LOCKOUT })
    const user = await createUser(one, tenant)
    t.equal((await login(one, tenant.code, user.email, WRONG)).status, 401)
    t.equal((await login(two, tenant.code, user.email, WRONG)).status, 401)
    t.equal((await login(one, tenant.code, user.email, WRONG)).status, 401)
    const r = await login(two, tenant.code, user.email)
    t.equal(r.status, 429, 'failures on both instances added up to a lock seen by the other')
    t.equal(r.headers['retry-after'], '60')
    const rows = await one.ctx.dbs.main.selectFrom('login_throttle').select('identifier').execute()
    t.same(rows, [], 'with Redis the counters are not in the database')
  },
)
