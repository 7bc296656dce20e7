import t from 'tap'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createTenant, createUser, platformKey, type TenantFx } from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { sha256Hex } from '../../src/lib/tokens.js'
import { call, loginTokens, refresh, unchecked } from '../helpers/call.js'

// `AuthConfig.sessionMaxLifetimeSeconds` (openapi/components/auth-config.yaml) bounds a session from
// its login, whatever its refreshes; refresh tokens expire at the earlier of their own expiry and the
// session's end.

const HOUR = 3600

/** The stored expiry of a refresh token and of its session, in epoch ms, and the session's start. */
async function expiries(app: TestApp, tenant: TenantFx, refreshToken: string) {
  const row = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select([
      'refresh_tokens.expires_at as token',
      'sessions.expires_at as session',
      'sessions.created_at as started',
    ])
    .where('refresh_tokens.token_hash', '=', sha256Hex(refreshToken))
    .executeTakeFirstOrThrow()
  return {
    token: new Date(row.token).getTime(),
    session: new Date(row.session).getTime(),
    started: new Date(row.started).getTime(),
  }
}

t.test('refresh: sessionMaxLifetimeSeconds bounds a session from its login', async (t) => {
  const clock = createManualClock(Date.parse('2030-01-01T00:00:00Z'))
  const app = await buildTestApp(t, {}, { clock })
  // Tokens live 2 h, sessions 5 h: refreshing every hour would otherwise keep the session forever.
  const tenant = await createTenant(app, {
    refreshTokenExpiresIn: 2 * HOUR,
    sessionMaxLifetimeSeconds: 5 * HOUR,
  })
  const user = await createUser(app, tenant)

  t.test('200 while the session is young; the token expires at its own expiry then', async (t) => {
    const start = clock.now()
    const first = await loginTokens(app, user)
    const atLogin = await expiries(app, tenant, first.refreshToken)
    t.equal(atLogin.token, start + 2 * HOUR * 1000, 'login: its own expiry, the earlier one')
    t.equal(atLogin.session, atLogin.token)
    clock.advance(HOUR * 1000)
    const res = await refresh(app, first.refreshToken)
    t.equal(res.status, 200)
    const next = await expiries(app, tenant, res.data.refreshToken)
    t.equal(next.token, clock.now() + 2 * HOUR * 1000)
    t.equal(next.session, next.token, 'the session ends with its newest token')
  })

  t.test('the refresh token expiry is capped at the session end; 401 after it', async (t) => {
    const start = clock.now()
    let pair = await loginTokens(app, user)
    for (let hour = 1; hour <= 4; hour++) {
      clock.set(start + hour * HOUR * 1000)
      const res = await refresh(app, pair.refreshToken)
      t.equal(res.status, 200, `refresh after ${hour} h`)
      pair = res.data
    }
    const capped = await expiries(app, tenant, pair.refreshToken)
    t.equal(capped.started, start, 'the session still counts from its login')
    t.equal(capped.token, start + 5 * HOUR * 1000, 'capped at login + 5 h, not 4 h + 2 h')
    t.equal(capped.session, capped.token)

    clock.set(start + 5 * HOUR * 1000 + 1000)
    const late = await refresh(app, pair.refreshToken)
    t.equal(late.status, 401, 'past the session end')
    t.equal(late.code, 'INVALID_REFRESH_TOKEN')
  })

  t.test('login: a session maximum below the token lifetime caps the first token too', async (t) => {
    const short = await createTenant(app, { refreshTokenExpiresIn: 2 * HOUR, sessionMaxLifetimeSeconds: 600 })
    const u = await createUser(app, short)
    const start = clock.now()
    const pair = await loginTokens(app, u)
    const e = await expiries(app, short, pair.refreshToken)
    t.equal(e.token, start + 600 * 1000)
    t.equal(e.session, start + 600 * 1000)
    clock.advance(601 * 1000)
    t.equal((await refresh(app, pair.refreshToken)).status, 401)
  })

  t.test('lowering the maximum ends sessions already older than the new bound', async (t) => {
    const tenant2 = await createTenant(app, { refreshTokenExpiresIn: 2 * HOUR })
    const u = await createUser(app, tenant2)
    const pair = await loginTokens(app, u)
    clock.advance(HOUR * 1000)
    const patched = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant2.id },
      body: {
        sessionMaxLifetimeSeconds: 1800,
      },
    })
    t.equal(patched.status, 200)
    const res = await refresh(app, pair.refreshToken)
    t.equal(res.status, 401)
    t.equal(res.code, 'INVALID_REFRESH_TOKEN')
  })
})

t.test('updateTenantConfig: sessionMaxLifetimeSeconds', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)

  t.test('200: defaults to 90 days; merged like every other key', async (t) => {
    const before = await call(app, 'getTenant', platformKey, { params: { id: tenant.id } })
    t.equal(before.body.data.auth_config.sessionMaxLifetimeSeconds, 7_776_000)
    const res = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: {
        sessionMaxLifetimeSeconds: 86_400,
      },
    })
    t.equal(res.status, 200)
    t.equal(res.body.data.sessionMaxLifetimeSeconds, 86_400)
    t.equal(res.body.data.refreshTokenExpiresIn, 2_592_000, 'the other keys kept')
  })

  t.test('400 VALIDATION_ERROR outside 60..31536000 or not an integer', async (t) => {
    for (const v of [59, 31_536_001, 90.5, '3600']) {
      const res = await call(app, 'updateTenantConfig', platformKey, {
        params: { id: tenant.id },
        body: unchecked({
          sessionMaxLifetimeSeconds: v,
        }),
      })
      t.equal(res.status, 400, JSON.stringify(v))
      t.equal(res.body.code, 'VALIDATION_ERROR')
    }
  })
})
