import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, refresh, unchecked } from '../helpers/call.js'
import {
  activeSessions,
  auditRows,
  createTenant,
  deactivateTenant,
  freshIp,
  userWithToken,
} from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { verifyAccessToken } from './token.js'
import { SoftAuthenticator } from './soft-authenticator.js'
import { enroll, ORIGIN, passkeyLogin, passkeyTenant, RP_ID } from './support.js'
import { appWithMail } from '../email/smtp.js'

// The passkey login (contract section 21): a discoverable credential finds its user; every way the answer
// fails is one 401 INVALID_CREDENTIALS with the same bytes; the same completion step as a password login.

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const LOCKOUT = { enabled: true, threshold: 3, windowSeconds: 60, baseSeconds: 60, maxSeconds: 120 }

async function withPasskey(extra: Record<string, unknown> = {}, counts = true) {
  const tenant = await passkeyTenant(app, extra)
  const user = await userWithToken(app, tenant, { roles: ['user'] })
  const { auth, passkey } = await enroll(app, user.cred, counts)
  return { tenant, user, auth, passkey }
}

t.test('getPasskeyLoginOptions: POST /login/passkey/options', async (t) => {
  const tenant = await passkeyTenant(app)
  const res = await call(
    app,
    'getPasskeyLoginOptions',
    {},
    { body: { tenantCode: tenant.code.toUpperCase() } },
  )
  t.equal(res.status, 200)
  t.match(res.data, { rpId: RP_ID, allowCredentials: [], userVerification: 'required', timeout: 300_000 })
  t.match(res.data.challenge, /^[A-Za-z0-9_-]{43}$/, '256 bits')
  const unknown = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: 'no-such-tenant' } })
  t.equal(unknown.status, 404)
  t.equal(unknown.code, 'TENANT_NOT_FOUND')
  const plain = await createTenant(app)
  const off = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: plain.code } })
  t.equal(off.status, 409)
  t.equal(off.code, 'PASSKEYS_DISABLED')
  t.equal((await call(app, 'getPasskeyLoginOptions', {}, { body: unchecked({}) })).status, 400)
  const ip = freshIp()
  for (let i = 1; i <= 5; i++) {
    t.equal(
      (await call(app, 'getPasskeyLoginOptions', { ip }, { body: { tenantCode: tenant.code } })).status,
      200,
    )
  }
  const over = await call(app, 'getPasskeyLoginOptions', { ip }, { body: { tenantCode: tenant.code } })
  t.equal(over.status, 429, 'the login budget: 5 per minute per IP')
  t.equal(over.code, 'RATE_LIMIT_EXCEEDED')
})

t.test(
  'loginWithPasskey: 200 the login response, through the password login’s completion step',
  async (t) => {
    const { tenant, user, auth, passkey } = await withPasskey({ maxConcurrentSessions: 1 })
    const { res } = await passkeyLogin(app, tenant, auth)
    t.equal(res.status, 200)
    t.match(res.data.user, { id: user.id, tenantCode: tenant.code })
    const claims = await verifyAccessToken(app, res.data.accessToken)
    t.equal(claims.sub, user.id)
    t.equal(claims.auth_time, Math.floor(clock.now() / 1000), 'auth_time is the login’s')
    const refreshed = await refresh(app, res.data.refreshToken)
    t.equal(refreshed.status, 200, 'a real session: its refresh token works')
    const second = await passkeyLogin(app, tenant, auth)
    t.equal(second.res.status, 200)
    t.equal(
      (await activeSessions(app, user)).length,
      1,
      'the session limit applies (maxConcurrentSessions 1)',
    )
    const rows = (await auditRows(app, tenant.id, 'LOGIN')).filter((r) => r.success)
    t.equal(rows.length, 2)
    t.match(rows[0], { user_id: user.id, metadata: { method: 'passkey' } })
    const listed = await call(app, 'listMyPasskeys', user.cred)
    const used = listed.data.items.find((p) => p.id === passkey.id)
    t.ok(used?.lastUsedAt, 'lastUsedAt is set')
    // Why the second login's token: the first one's session was the one the limit ended.
    const fresh = await call(app, 'getPasskeyRegistrationOptions', { token: second.res.data.accessToken })
    t.equal(fresh.status, 200, 'a passkey login is a recent sign-in')
  },
)

t.test('loginWithPasskey: no second-factor step, even for a user who needs one', async (t) => {
  const { tenant, auth } = await withPasskey({ mfa: { required: true } })
  const { res } = await passkeyLogin(app, tenant, auth)
  t.equal(res.status, 200)
})

t.test('loginWithPasskey: a counter of 0 (a synced passkey) logs in again and again', async (t) => {
  const { tenant, auth } = await withPasskey({}, false)
  t.equal((await passkeyLogin(app, tenant, auth)).res.status, 200)
  t.equal((await passkeyLogin(app, tenant, auth)).res.status, 200)
})

t.test(
  'loginWithPasskey: 401 INVALID_CREDENTIALS, one answer with the same bytes for every failure',
  async (t) => {
    const { tenant, user, auth } = await withPasskey()
    const other = await passkeyTenant(app)
    const stranger = await userWithToken(app, other)
    const foreign = await enroll(app, stranger.cred)
    const unknown = new SoftAuthenticator(ORIGIN, RP_ID)
    unknown.userHandle = auth.userHandle
    const answers: { why: string; raw: string; status: number }[] = []
    const keep = (why: string, r: { raw: string; status: number }) =>
      answers.push({ why, raw: r.raw, status: r.status })

    keep(
      'another origin',
      (await passkeyLogin(app, tenant, auth, { forge: { origin: 'https://evil.test' } })).res,
    )
    keep('another rpId', (await passkeyLogin(app, tenant, auth, { forge: { rpId: 'evil.test' } })).res)
    keep('no user verification', (await passkeyLogin(app, tenant, auth, { forge: { noUv: true } })).res)
    keep('a bad signature', (await passkeyLogin(app, tenant, auth, { forge: { wrongKey: true } })).res)
    keep('an unknown credential', (await passkeyLogin(app, tenant, unknown)).res)
    keep('another tenant’s credential', (await passkeyLogin(app, tenant, foreign.auth)).res)
    keep(
      'a foreign user handle',
      (await passkeyLogin(app, tenant, auth, { forge: { userHandle: foreign.auth.userHandle } })).res,
    )
    keep(
      'a challenge never given',
      (await passkeyLogin(app, tenant, auth, { forge: { challenge: 'bm90LWdpdmVu' } })).res,
    )
    const ok = await passkeyLogin(app, tenant, auth)
    t.equal(ok.res.status, 200, 'the genuine answer passes')
    const replay = await call(
      app,
      'loginWithPasskey',
      {},
      { body: { tenantCode: tenant.code, response: ok.response } },
    )
    keep('a replayed (used) challenge', replay)
    keep('the counter went backwards', (await passkeyLogin(app, tenant, auth, { forge: { counter: 1 } })).res)
    const late = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: tenant.code } })
    clock.advance(5 * 60_000 + 1000)
    const expired = await call(
      app,
      'loginWithPasskey',
      {},
      {
        body: { tenantCode: tenant.code, response: auth.login(late.data) },
      },
    )
    keep('an expired challenge', expired)

    const expected = answers[0]?.raw
    for (const a of answers) {
      t.equal(a.status, 401, a.why)
      t.equal(a.raw, expected, `${a.why}: the same bytes`)
    }
    t.match(JSON.parse(expected ?? '{}'), { success: false, code: 'INVALID_CREDENTIALS' })
    const failures = (await auditRows(app, tenant.id, 'LOGIN')).filter((r) => !r.success)
    t.equal(failures.length, answers.length, 'one LOGIN failure row each')
    t.ok(
      failures.every((r) => (r.metadata as { method?: string }).method === 'passkey'),
      'method passkey',
    )
    t.ok(
      failures.some((r) => r.user_id === user.id),
      'the user is named where the passkey was known',
    )
    t.equal((await auditRows(app, other.id, 'LOGIN')).length, 0, 'nothing written to the other tenant')
    t.equal((await passkeyLogin(app, other, foreign.auth)).res.status, 200, 'it logs in to its own tenant')
  },
)

t.test('loginWithPasskey: 403 USER_INACTIVE, told only after the passkey verified', async (t) => {
  const { tenant, user, auth } = await withPasskey()
  const db = app.ctx.dbs.forTenant(tenant.id)
  await db.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', user.id).execute()
  const inactive = (await passkeyLogin(app, tenant, auth)).res
  t.equal(inactive.status, 403)
  t.equal(inactive.code, 'USER_INACTIVE')
  const refusal = (await auditRows(app, tenant.id, 'LOGIN')).filter((r) => !r.success)
  t.same(
    refusal.map((r) => [r.user_id, r.error_message]),
    [[user.id, 'user suspended']],
    'the failure row names the user, not the passkey',
  )
  const forged = (await passkeyLogin(app, tenant, auth, { forge: { wrongKey: true } })).res
  t.equal(forged.code, 'INVALID_CREDENTIALS', 'the status is told only to a verified passkey')
})

t.test(
  'loginWithPasskey: 403 EMAIL_NOT_VERIFIED where the tenant requires it, with no session',
  async (t) => {
    // Why an app of its own: verification is enforced only where mail is on (section 18), and this file's app
    // has none.
    const { app: mailing } = await appWithMail(t)
    const tenant = await passkeyTenant(mailing, { email: { verification: 'required' } })
    const user = await userWithToken(mailing, tenant, { roles: ['user'] })
    const { auth } = await enroll(mailing, user.cred)
    const db = mailing.ctx.dbs.forTenant(tenant.id)
    await db.updateTable('users').set({ email_verified: false }).where('id', '=', user.id).execute()
    // Why compared with before: the fixture's token has a session of its own (its sign-in).
    const before = await activeSessions(mailing, user)
    const refused = (await passkeyLogin(mailing, tenant, auth)).res
    t.equal(refused.status, 403)
    t.equal(refused.code, 'EMAIL_NOT_VERIFIED')
    t.same(await activeSessions(mailing, user), before, 'no session opened')
    const refusal = (await auditRows(mailing, tenant.id, 'LOGIN')).filter((r) => !r.success)
    t.same(
      refusal.map((r) => [r.user_id, r.error_message]),
      [[user.id, 'email not verified']],
      'the failure row names the user, not the passkey',
    )
    const forged = (await passkeyLogin(mailing, tenant, auth, { forge: { wrongKey: true } })).res
    t.equal(forged.code, 'INVALID_CREDENTIALS', 'told only to a verified passkey')
    await db.updateTable('users').set({ email_verified: true }).where('id', '=', user.id).execute()
    t.equal((await passkeyLogin(mailing, tenant, auth)).res.status, 200, 'a verified address logs in')
  },
)

t.test('loginWithPasskey: 404 TENANT_NOT_FOUND, 409 PASSKEYS_DISABLED, 400 VALIDATION_ERROR', async (t) => {
  const { tenant, auth } = await withPasskey()
  const options = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: tenant.code } })
  const response = auth.login(options.data)
  const none = await call(app, 'loginWithPasskey', {}, { body: { tenantCode: 'no-such-tenant', response } })
  t.equal(none.status, 404)
  t.equal(none.code, 'TENANT_NOT_FOUND')
  const plain = await createTenant(app)
  const off = await call(app, 'loginWithPasskey', {}, { body: { tenantCode: plain.code, response } })
  t.equal(off.status, 409)
  t.equal(off.code, 'PASSKEYS_DISABLED')
  const bad = await call(
    app,
    'loginWithPasskey',
    {},
    { body: unchecked({ tenantCode: tenant.code, response: { id: 'x' } }) },
  )
  t.equal(bad.status, 400)
})

t.test('loginWithPasskey: 404 TENANT_NOT_FOUND for an INACTIVE tenant, as a password login', async (t) => {
  const { tenant, auth } = await withPasskey()
  const options = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: tenant.code } })
  const response = auth.login(options.data)
  await deactivateTenant(app, tenant.id)
  const login = await call(app, 'loginWithPasskey', {}, { body: { tenantCode: tenant.code, response } })
  t.equal(login.status, 404, 'a verified passkey of a deactivated tenant')
  t.equal(login.code, 'TENANT_NOT_FOUND')
  const again = await call(app, 'getPasskeyLoginOptions', {}, { body: { tenantCode: tenant.code } })
  t.equal(again.status, 404, 'and no new challenge for it')
  t.equal(again.code, 'TENANT_NOT_FOUND')
})

t.test('loginWithPasskey: account throttling as for a password login', async (t) => {
  const { tenant, user, auth } = await withPasskey({ lockout: LOCKOUT })
  for (let i = 1; i <= 3; i++) {
    const r = (await passkeyLogin(app, tenant, auth, { forge: { wrongKey: true } })).res
    t.equal(r.code, 'INVALID_CREDENTIALS', `forged answer ${i}`)
  }
  const locked = (await passkeyLogin(app, tenant, auth)).res
  t.equal(locked.status, 429, 'the user’s identifier is locked: the genuine passkey too')
  t.equal(locked.code, 'RATE_LIMIT_EXCEEDED')
  t.equal(locked.headers['retry-after'], '60')
  t.equal(locked.body?.error, 'Rate limit exceeded', 'the contract’s error text')
  const password = await call(
    app,
    'login',
    {},
    { body: { tenantCode: tenant.code, identifier: user.email, password: 'x' } },
  )
  t.equal(password.status, 429, 'and the password login of the same identifier')
  t.ok((await auditRows(app, tenant.id, 'ACCOUNT_LOCKED')).some((r) => r.user_id === user.id))
  clock.advance(61_000)
  t.equal((await passkeyLogin(app, tenant, auth)).res.status, 200, 'the lock ends on time')
})

t.test('loginWithPasskey: spends the per-IP login budget it shares with POST /login', async (t) => {
  const { tenant, user, auth } = await withPasskey()
  const ip = freshIp()
  const first = await passkeyLogin(app, tenant, auth, { ip })
  t.equal(first.res.status, 200, 'options and login: two of the five')
  await passkeyLogin(app, tenant, auth, { ip })
  const options = await call(app, 'getPasskeyLoginOptions', { ip }, { body: { tenantCode: tenant.code } })
  t.equal(options.status, 200, 'the fifth')
  const over = await call(
    app,
    'loginWithPasskey',
    { ip },
    {
      body: { tenantCode: tenant.code, response: auth.login(options.data) },
    },
  )
  t.equal(over.status, 429)
  t.equal(over.code, 'RATE_LIMIT_EXCEEDED')
  const pw = await call(
    app,
    'login',
    { ip },
    { body: { tenantCode: tenant.code, identifier: user.email, password: 'x' } },
  )
  t.equal(pw.status, 429, 'POST /login shares it')
})
