import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { auditRows, createTenant, createUser } from '../helpers/fixtures.js'
import { call, loginTokens, logoutWith, refresh, unchecked } from '../helpers/call.js'
import { liveTokensOf, sessionOfToken } from '../helpers/sessions.js'
import { createManualClock } from '../../src/lib/clock.js'
import { sql } from 'kysely'

t.test('refresh: POST /refresh', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'] })

  t.test("the rotation's commit setting does not outlive its statement", async (t) => {
    const first = await loginTokens(app, user)
    t.equal((await refresh(app, first.refreshToken)).status, 200)
    // Why sequential reads: the pool hands the connection just released back first, so these run on
    // the connection that served the refresh; set_config(..., true) must have ended with its statement.
    for (let i = 0; i < 3; i++) {
      const { rows } = await sql<{ v: string }>`select current_setting('synchronous_commit') as v`.execute(
        app.ctx.dbs.main,
      )
      t.equal(rows[0]?.v, 'on', 'every later statement commits synchronously')
    }
  })

  t.test('200 rotates: a new pair, the old token revoked, current roles in the new token', async (t) => {
    const first = await loginTokens(app, user)
    const res = await refresh(app, first.refreshToken)
    t.equal(res.status, 200)
    const next = res.data
    t.not(next.refreshToken, first.refreshToken)
    t.not(next.accessToken, first.accessToken)
    t.equal(next.user.id, user.id)
    const again = await refresh(app, first.refreshToken)
    t.equal(again.status, 401)
    t.equal(again.code, 'INVALID_REFRESH_TOKEN')
    const rows = await auditRows(app, tenant.id, 'REFRESH_TOKEN')
    t.ok(
      rows.some((r) => r.success) && rows.some((r) => !r.success),
      'REFRESH_TOKEN rows for success and failure',
    )
  })

  t.test('10 concurrent refreshes with one token: exactly one 200', async (t) => {
    const { refreshToken } = await loginTokens(app, user)
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(app, refreshToken)))
    t.equal(results.filter((r) => r.status === 200).length, 1)
    t.ok(results.filter((r) => r.status !== 200).every((r) => r.code === 'INVALID_REFRESH_TOKEN'))
  })

  t.test('reuse after the grace revokes the whole session, successor included', async (t) => {
    const { refreshToken } = await loginTokens(app, user)
    const successor = (await refresh(app, refreshToken)).data.refreshToken
    clock.advance(11_000)
    const reuse = await refresh(app, refreshToken)
    t.equal(reuse.status, 401)
    t.equal(reuse.code, 'INVALID_REFRESH_TOKEN')
    const next = await refresh(app, successor)
    t.equal(next.status, 401, 'the successor was revoked with the session')
  })

  t.test('reuse within the grace answers 401 without revoking the session', async (t) => {
    const { refreshToken } = await loginTokens(app, user)
    const successor = (await refresh(app, refreshToken)).data.refreshToken
    clock.advance(2_000)
    t.equal((await refresh(app, refreshToken)).status, 401)
    t.equal((await refresh(app, successor)).status, 200, 'the successor still works')
  })

  t.test('401 for an expired refresh token', async (t) => {
    const { refreshToken } = await loginTokens(app, user)
    clock.advance(2_592_000 * 1000 + 1000)
    t.equal((await refresh(app, refreshToken)).status, 401)
  })

  t.test('401 for a user that is no longer active', async (t) => {
    const u = await createUser(app, tenant)
    const { refreshToken } = await loginTokens(app, u)
    await app.ctx.dbs
      .forTenant(tenant.id)
      .updateTable('users')
      .set({ status: 'INACTIVE' })
      .where('id', '=', u.id)
      .execute()
    t.equal((await refresh(app, refreshToken)).status, 401)
  })

  t.test('401 INVALID_REFRESH_TOKEN for any unknown string, 400 for a non-string', async (t) => {
    for (const v of ['x', 'A'.repeat(64), '']) {
      const res = await refresh(app, v)
      t.equal(res.status, 401, JSON.stringify(v))
      t.equal(res.code, 'INVALID_REFRESH_TOKEN')
    }
    const bad = await refresh(app, unchecked(42))
    t.equal(bad.status, 400)
    t.equal(bad.code, 'VALIDATION_ERROR')
    const missing = await call(app, 'refresh', null, { body: unchecked({}) })
    t.equal(missing.status, 400)
  })
})

t.test('logout: POST /logout', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const other = await createUser(app, tenant)

  t.test('200 revoked=true; the access token still works, refreshing does not', async (t) => {
    const s = await loginTokens(app, user)
    const res = await logoutWith(app, s.accessToken, s.refreshToken)
    t.equal(res.status, 200)
    t.same(res.data, { revoked: true })
    const me = await call(app, 'getMe', { token: s.accessToken })
    t.equal(me.status, 200)
    t.equal((await refresh(app, s.refreshToken)).status, 401)
    const row = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('refresh_tokens')
      .select('revoked_at')
      .where('tenant_id', '=', tenant.id)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow()
    t.ok(row.revoked_at, 'the token row is revoked')
  })

  t.test("200 revoked=false for another user's token, with a failure audit row", async (t) => {
    const mine = await loginTokens(app, user)
    const theirs = await loginTokens(app, other)
    const res = await logoutWith(app, mine.accessToken, theirs.refreshToken)
    t.same(res.data, { revoked: false })
    t.equal((await refresh(app, theirs.refreshToken)).status, 200, 'their session is untouched')
    const rows = (await auditRows(app, tenant.id, 'LOGOUT')).filter((r) => !r.success)
    t.ok(rows[0]?.error_message)
  })

  const logout = (accessToken: string, refreshToken: string) => logoutWith(app, accessToken, refreshToken)
  const sessionOf = (refreshToken: string) => sessionOfToken(app, tenant.id, refreshToken)

  t.test('200 revoked=true with a token already rotated: the session ends, its successor too', async (t) => {
    const s = await loginTokens(app, user)
    const rotated = (await refresh(app, s.refreshToken)).data
    const res = await logout(s.accessToken, s.refreshToken)
    t.equal(res.status, 200)
    t.same(res.data, { revoked: true })
    const next = await refresh(app, rotated.refreshToken)
    t.equal(next.status, 401, 'the successor no longer refreshes')
    t.equal(next.code, 'INVALID_REFRESH_TOKEN')
    const session = await sessionOf(s.refreshToken)
    t.ok(session.revoked_at, 'the session row is revoked')
    t.equal(session.revoked_reason, 'logout')
    const live = await liveTokensOf(app, tenant.id, session.id)
    t.equal(live.length, 0, 'no token of the session is live')
  })

  t.test('200 revoked=true with a token rotated twice, after the reuse grace', async (t) => {
    const s = await loginTokens(app, user)
    const second = (await refresh(app, s.refreshToken)).data
    const third = (await refresh(app, second.refreshToken)).data
    clock.advance(11_000)
    t.same((await logout(third.accessToken, s.refreshToken)).data, { revoked: true })
    t.equal((await refresh(app, third.refreshToken)).status, 401)
  })

  t.test('200 revoked=false when the session was already ended; nothing changes', async (t) => {
    const s = await loginTokens(app, user)
    t.same((await logout(s.accessToken, s.refreshToken)).data, { revoked: true })
    t.same((await logout(s.accessToken, s.refreshToken)).data, { revoked: false })
  })

  t.test("200 revoked=false for another user's rotated token; their session keeps working", async (t) => {
    const mine = await loginTokens(app, user)
    const theirs = await loginTokens(app, other)
    const theirNext = (await refresh(app, theirs.refreshToken)).data
    const res = await logout(mine.accessToken, theirs.refreshToken)
    t.same(res.data, { revoked: false })
    t.equal((await sessionOf(theirs.refreshToken)).revoked_at, null, 'their session row is untouched')
    t.equal((await refresh(app, theirNext.refreshToken)).status, 200, 'their successor still refreshes')
  })

  t.test("200 revoked=false for another tenant's token", async (t) => {
    const otherTenant = await createTenant(app)
    const stranger = await createUser(app, otherTenant)
    const theirs = await loginTokens(app, stranger)
    const mine = await loginTokens(app, user)
    t.same((await logout(mine.accessToken, theirs.refreshToken)).data, { revoked: false })
    t.equal((await refresh(app, theirs.refreshToken)).status, 200)
  })

  t.test('401 without a token, 400 without a body field', async (t) => {
    const none = await call(app, 'logout', null, { body: { refreshToken: 'x' } })
    t.equal(none.status, 401)
    t.equal(none.code, 'UNAUTHORIZED')
    const s = await loginTokens(app, user)
    const bad = await call(app, 'logout', { token: s.accessToken }, { body: unchecked({}) })
    t.equal(bad.status, 400)
  })
})
