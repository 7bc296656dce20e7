import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { backends } from '../helpers/db.js'
import { activeSessions, createTenant, createUser } from '../helpers/fixtures.js'
import { loginAs, loginTokens, logoutWith, refresh } from '../helpers/call.js'
import { liveTokensOf, sessionOfToken } from '../helpers/sessions.js'
import type { PasswordHasher } from '../../src/lib/hashing.js'
import { retryOnContention } from '../../src/db/contention.js'
import { AppError } from '../../src/errors.js'

// Races between logins, refreshes and logouts of one user (logout in openapi/paths/auth.yaml, and
// docs/decisions.md D9: no 500 from lock contention). PGlite has one connection, so there the requests interleave only between
// statements; the real races need PostgreSQL (TEST_DATABASE_URL).

/** Why: bcrypt cost 12 would allow a handful of logins a second; the races are about the database. */
function cheapPasswords(app: TestApp): void {
  ;(app.ctx.hasher as { verify: PasswordHasher['verify'] }).verify = async () => ({
    ok: true,
    needsRehash: false,
  })
}

for (const backend of backends()) {
  t.test(`logout: racing a refresh of the same session leaves no live token (${backend})`, async (t) => {
    const app = await buildTestApp(t, {}, { backend })
    cheapPasswords(app)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const rounds = backend === 'postgres' ? 50 : 5
    let refreshedFirst = 0
    for (let i = 0; i < rounds; i++) {
      const first = await loginTokens(app, user)
      // Even rounds log out with an already rotated token, odd rounds with the one being refreshed.
      const second = (await refresh(app, first.refreshToken)).data
      const racing = i % 2 === 0 ? first.refreshToken : second.refreshToken
      // Why a delay in half the rounds: a refresh is one statement, a logout a few, so without it the
      // refresh nearly always takes the session lock first; both orders must hold.
      const delay = i % 4 < 2 ? 0 : Math.random() * 6
      const [r, out] = await Promise.all([
        sleep(delay).then(() => refresh(app, second.refreshToken)),
        logoutWith(app, first.accessToken, racing),
      ])
      t.equal(out.status, 200)
      t.same(out.data, { revoked: true }, `round ${i}: the session was active, so revoked`)
      if (r.status === 200) {
        refreshedFirst++
        const successor = r.data.refreshToken
        const again = await refresh(app, successor)
        t.equal(again.status, 401, `round ${i}: the successor does not refresh after the logout`)
      } else {
        t.equal(r.code, 'INVALID_REFRESH_TOKEN')
      }
      const session = await sessionOfToken(app, tenant.id, first.refreshToken)
      const live = await liveTokensOf(app, tenant.id, session.id)
      t.equal(live.length, 0, `round ${i}: no live token of the session`)
      t.ok(session.revoked_at, `round ${i}: the session row is revoked`)
    }
    t.comment(`${refreshedFirst} of ${rounds} refreshes won the race`)
  })

  t.test(
    `login and refresh: racing logins (maxConcurrentSessions=2) and rotations never answer 500 (${backend})`,
    async (t) => {
      const app = await buildTestApp(t, { DATABASE_POOL_MAX: '20' }, { backend })
      cheapPasswords(app)
      const tenant = await createTenant(app, { maxConcurrentSessions: 2 })
      const user = await createUser(app, tenant)
      // Why 20 s on PostgreSQL: before one lock order, the deadlock showed within a few seconds there.
      const durationMs = backend === 'postgres' ? Number(process.env.RACE_MS ?? 20_000) : 2_000
      const until = Date.now() + durationMs
      const tokens: string[] = []
      const statuses = new Map<number, number>()
      const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1)
      const loginLoop = async () => {
        while (Date.now() < until) {
          const res = await loginAs(app, user)
          count(res.status)
          if (res.status === 200) tokens.push(res.data.refreshToken)
        }
      }
      const refreshLoop = async () => {
        while (Date.now() < until) {
          // Why the oldest: those are the sessions the next login revokes, so the two meet on them.
          const token = tokens.shift()
          if (token === undefined) {
            await new Promise((r) => setTimeout(r, 1))
            continue
          }
          const res = await refresh(app, token)
          count(res.status)
          if (res.status === 200) tokens.push(res.data.refreshToken)
        }
      }
      await Promise.all([...Array.from({ length: 4 }, loginLoop), ...Array.from({ length: 6 }, refreshLoop)])
      t.comment(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
      t.ok((statuses.get(200) ?? 0) > 0, 'requests went through')
      t.same(
        [...statuses.keys()].filter((s) => s !== 200 && s !== 401),
        [],
        'only 200 and 401 INVALID_REFRESH_TOKEN, never 500',
      )
      const active = await activeSessions(app, user)
      t.ok(active.length <= 2, 'the session limit held')
    },
  )
}

t.test('retryOnContention: deadlocks and serialisation failures are retried, at most 3 times', async (t) => {
  const failing = (code: string, times: number) => {
    let calls = 0
    const attempt = async () => {
      calls++
      if (calls <= times) throw Object.assign(new Error(code), { code })
      return 'done'
    }
    return { attempt, calls: () => calls }
  }

  t.test('a loss that clears within 3 retries succeeds', async (t) => {
    for (const code of ['40P01', '40001']) {
      const f = failing(code, 3)
      t.equal(await retryOnContention(f.attempt), 'done', code)
      t.equal(f.calls(), 4, 'the first attempt and 3 retries')
    }
  })

  t.test('a fourth loss is 503 SERVICE_UNAVAILABLE, never a 500', async (t) => {
    const f = failing('40P01', 10)
    const err = await retryOnContention(f.attempt).catch((e: unknown) => e)
    t.ok(err instanceof AppError)
    t.equal((err as AppError).code, 'SERVICE_UNAVAILABLE')
    t.equal(f.calls(), 4)
  })

  t.test('any other error passes through at once', async (t) => {
    const f = failing('23505', 1)
    const err = await retryOnContention(f.attempt).catch((e: unknown) => e)
    t.equal((err as { code: string }).code, '23505')
    t.equal(f.calls(), 1)
  })
})
