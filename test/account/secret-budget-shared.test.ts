import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildAppOn, buildTestApp } from '../helpers/app.js'
import { call, mfaTokenIn } from '../helpers/call.js'
import { createTestDatabaseUrl, defaultBackend } from '../helpers/db.js'
import { createTenant, createUser, freshIp, tokenFor } from '../helpers/fixtures.js'
import { assertSpent, harness } from '../helpers/secret-budget.js'
import { createManualClock } from '../../src/lib/clock.js'

// The per-user secret budget (contract section 22, "Every check of a user's secret is counted, always"):
// 10 failed checks of a second-factor code or of the current password in 15 minutes, whatever
// auth_config.lockout says; past it every check of the user is 429 with Retry-After, from any address and
// with the right secret, until the window ends or an administrator unlocks the user.
// This file: concurrency, a shared store that does not answer, and two instances.

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const h = harness(app, clock)
t.test('verifyLoginOtp: 20 parallel wrong guesses, then the right code: at most 10 are judged', async (t) => {
  const tenant = await createTenant(app)
  const user = await h.enrolled(tenant)
  const tokens = await Promise.all(Array.from({ length: 20 }, () => h.login(user)))
  const guesses = await Promise.all(
    tokens.map((r) =>
      call(
        app,
        'verifyLoginOtp',
        { ip: freshIp() },
        { body: { mfaToken: mfaTokenIn(r), code: h.wrong(user) } },
      ),
    ),
  )
  const codes = guesses.map((r) => r.code)
  t.equal(codes.filter((c) => c === 'INVALID_OTP').length, 10, `10 judged (${codes.join(',')})`)
  t.equal(codes.filter((c) => c === 'RATE_LIMIT_EXCEEDED').length, 10, 'the rest refused unjudged')
  assertSpent(t, await h.verify(user, h.code(user)), 'then the right code')
})

t.test('disableMyOtp: 20 parallel wrong guesses, then the right code: 429', async (t) => {
  const tenant = await createTenant(app)
  const user = await h.enrolled(tenant)
  const as = await h.sessionOf(user)
  const guesses = await Promise.all(
    Array.from({ length: 20 }, () => call(app, 'disableMyOtp', as, { body: { code: h.wrong(user) } })),
  )
  const codes = guesses.map((r) => r.code)
  t.equal(codes.filter((c) => c === 'INVALID_OTP').length, 10, `10 judged (${codes.join(',')})`)
  assertSpent(t, await call(app, 'disableMyOtp', as, { body: { code: h.code(user) } }), 'the right code')
})

t.test(
  'a shared store that does not answer: checks are counted in memory; health says degraded',
  async (t) => {
    const local = createManualClock()
    const down = await buildTestApp(t, { REDIS_URL: 'redis://127.0.0.1:1' }, { clock: local })
    const hd = harness(down, local)
    const tenant = await createTenant(down)
    const user = await hd.enrolled(tenant)
    for (let i = 0; i < 10; i++) t.equal((await hd.verify(user, hd.wrong(user))).code, 'INVALID_OTP')
    assertSpent(t, await hd.verify(user, hd.code(user)), 'counted without the shared store')
    t.equal((await call(down, 'getHealth')).data.status, 'degraded')
  },
)

const redisUrl = process.env.TEST_REDIS_URL

t.test(
  `verifyLoginOtp: two instances on one PostgreSQL${redisUrl ? ' and one Redis' : ''} share the budget`,
  { skip: defaultBackend() !== 'postgres' ? 'needs TEST_BACKEND=postgres (one database)' : false },
  async (t) => {
    const { url, drop } = await createTestDatabaseUrl('postgres')
    t.teardown(drop)
    const namespace = `t-${randomUUID()}:`
    const env = {
      DATABASE_URL: url,
      REDIS_KEY_PREFIX: namespace,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    }
    const shared = createManualClock()
    const one = await buildAppOn(env, { clock: shared })
    t.teardown(() => one.close())
    const two = await buildAppOn(env, { clock: shared })
    t.teardown(() => two.close())
    const [h1, h2] = [harness(one, shared), harness(two, shared)]
    const tenant = await createTenant(one)
    const user = await h1.enrolled(tenant)
    for (let i = 0; i < 5; i++) t.equal((await h1.verify(user, h1.wrong(user))).code, 'INVALID_OTP')
    for (let i = 0; i < 5; i++) t.equal((await h2.verify(user, h2.wrong(user))).code, 'INVALID_OTP')
    assertSpent(t, await h1.verify(user, h1.code(user)), 'failures on both instances added up')
    assertSpent(t, await h2.verify(user, h2.code(user)), 'seen by the other too')
    const rows = await one.ctx.dbs.main
      .selectFrom('login_throttle')
      .select('identifier')
      .where('identifier', '=', `secret-budget:${user.id}`)
      .execute()
    t.equal(rows.length, redisUrl ? 0 : 1, redisUrl ? 'with Redis, not in the database' : 'in the database')
    const admin = await tokenFor(two, await createUser(two, tenant, { roles: ['admin'] }))
    t.equal((await call(two, 'unlockUser', { token: admin }, { params: { userId: user.id } })).status, 200)
    t.equal((await h1.verify(user, h1.code(user))).status, 200, 'an unlock on one clears it for the other')
  },
)
