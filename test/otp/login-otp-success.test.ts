import t from 'tap'
import { call, mfaTokenIn, refresh } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  freshIp,
  PASSWORD,
  tokenFor,
  userWithToken,
} from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { loginOtpApp, STEP_MS, LOCKOUT, standalone } from './support.js'

// The second factor at login when it lets the user in (contract section 16; openapi/paths/otp.yaml
// verifyLoginOtp, setupLoginOtp, and `otp` on POST /login): in one step or two, by a TOTP or a recovery
// code, enrollment during login, drift, budgets, metrics and logs. The refusals are in
// login-otp-refused.test.ts (401) and login-otp-limits.test.ts (403, 409, 429); the enrollment under
// /me/otp in enrollment-*.test.ts.

const kit = await loginOtpApp(t)
const { app, clock, logLines, codeOf, wrongCode, loginOtp, mfaTokenOf, verify, setupLogin } = kit
const { sessionCount, mfaTokenRows, loginRows, setOtpEnabled, enrolledUser } = kit

t.test('login: a user who needs no second factor logs in as before; otp is ignored', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const before = await sessionCount(tenant)
  const plain = await loginOtp(user)
  t.equal(plain.status, 200)
  for (const otp of ['123456', 'abcd-efgh-ijkl']) {
    const res = await loginOtp(user, otp)
    t.equal(res.status, 200, `otp ${otp} is ignored`)
    t.match(res.data, { accessToken: String, refreshToken: String, user: { id: user.id } })
  }
  t.equal(await sessionCount(tenant), before + 3, 'three sessions')
  t.equal(await mfaTokenRows(user), 0, 'no mfaToken')
  const rows = await loginRows(user)
  t.equal(rows.length, 3)
  t.ok(
    rows.every((r) => r.success && r.error_message === null),
    'three LOGIN success rows',
  )
})

t.test('login: an enrolled user with a correct otp logs in in one step', async (t) => {
  const user = await enrolledUser()
  const sessions = await sessionCount(user.tenant)
  const rowsBefore = (await loginRows(user)).length
  const res = await loginOtp(user, codeOf(user.otp))
  t.equal(res.status, 200)
  t.match(res.data, { accessToken: String, refreshToken: String, expiresIn: 900, user: { id: user.id } })
  t.equal(await sessionCount(user.tenant), sessions + 1, 'one session opened')
  t.equal(await mfaTokenRows(user), 0, 'no mfaToken issued')
  const rows = (await loginRows(user)).slice(rowsBefore)
  t.equal(rows.length, 1)
  t.match(rows[0], { success: true, error_message: null })
  t.same(rows[0]?.metadata, {}, 'no reason for a TOTP code')
  const me = await call(app, 'getMe', { token: res.data.accessToken })
  t.equal(me.status, 200, 'the access token works')
})

t.test('verifyLoginOtp: 200 with a TOTP code: the session opens now, one LOGIN success row', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  const sessions = await sessionCount(user.tenant)
  const rowsBefore = (await loginRows(user)).length
  const res = await verify(mfaToken, codeOf(user.otp))
  t.equal(res.status, 200)
  t.match(res.data, {
    accessToken: String,
    refreshToken: String,
    expiresIn: 900,
    user: { id: user.id, email: user.email, tenantId: user.tenant.id, tenantCode: user.tenant.code },
  })
  t.notOk('recoveryCodes' in res.data, 'no recovery codes outside an enrollment')
  t.equal(await sessionCount(user.tenant), sessions + 1, 'one session opened')
  t.equal(await mfaTokenRows(user), 0, 'the mfaToken is used up')
  const rows = (await loginRows(user)).slice(rowsBefore)
  t.equal(rows.length, 1)
  t.match(rows[0], { success: true, error_message: null })
  t.same(rows[0]?.metadata, {})
  const me = await call(app, 'getMe', { token: res.data.accessToken })
  t.equal(me.status, 200, 'the access token works')
  const refreshed = await refresh(app, res.data.refreshToken)
  t.equal(refreshed.status, 200, 'refresh asks no code')
})

t.test('verifyLoginOtp: 200 with a recovery code (any case, spaces for dashes), each once', async (t) => {
  const user = await enrolledUser()
  const [first, second] = user.otp.recoveryCodes
  if (!first || !second) throw new Error('no recovery codes')
  const rowsBefore = (await loginRows(user)).length
  const a = await verify(await mfaTokenOf(user), first)
  t.equal(a.status, 200, 'as shown')
  const b = await verify(await mfaTokenOf(user), second.toUpperCase().replace(/-/g, ' '))
  t.equal(b.status, 200, 'uppercase, with spaces instead of dashes')
  const third = user.otp.recoveryCodes[2]
  if (!third) throw new Error('no recovery code')
  t.equal((await loginOtp(user, third.toUpperCase().replace(/-/g, ' '))).status, 200, 'and at POST /login')
  const rows = (await loginRows(user)).slice(rowsBefore).filter((r) => r.success)
  t.equal(rows.length, 3)
  t.ok(
    rows.every((r) => (r.metadata as { reason?: string }).reason === 'recovery_code'),
    'LOGIN rows say recovery_code',
  )
  for (const used of [first, second, first.toUpperCase(), second.replace(/-/g, '')]) {
    const again = await verify(await mfaTokenOf(user), used)
    t.equal(again.status, 401)
    t.equal(again.code, 'INVALID_OTP', `${used} never works again at /login/otp`)
    const inOne = await loginOtp(user, used)
    t.equal(inOne.code, 'INVALID_OTP', `${used} never works again at /login`)
  }
  const me = await call(app, 'getMyOtp', { token: await tokenFor(app, user) })
  t.equal(me.data.recoveryCodesLeft, 7)
})

t.test(
  'login: otp of drift -1 and +1 accepted, -2 and +2 refused, 1 ms before a step boundary',
  async (t) => {
    const user = await enrolledUser()
    const k = Math.floor(clock.now() / STEP_MS) + 10
    clock.set(k * STEP_MS - 1)
    t.equal(codeOf(user.otp, 1), totpAt(user.otp.key, k * STEP_MS), 'drift +1 is the step after the boundary')
    for (const drift of [-2, 2]) {
      const res = await loginOtp(user, codeOf(user.otp, drift))
      t.equal(res.status, 401, `drift ${drift}`)
      t.equal(res.code, 'INVALID_OTP', `drift ${drift} refused`)
    }
    for (const drift of [-1, 1]) {
      const res = await loginOtp(user, codeOf(user.otp, drift))
      t.equal(res.status, 200, `drift ${drift} accepted`)
    }
  },
)

t.test(
  'verifyLoginOtp: code of drift -1 and +1 accepted, -2 and +2 refused, on a step boundary',
  async (t) => {
    const user = await enrolledUser()
    const k = Math.floor(clock.now() / STEP_MS) + 10
    clock.set(k * STEP_MS)
    const mfaToken = await mfaTokenOf(user)
    t.equal(
      codeOf(user.otp, -1),
      totpAt(user.otp.key, k * STEP_MS - 1),
      'drift -1 is the step before the boundary',
    )
    for (const drift of [-2, 2]) {
      const res = await verify(mfaToken, codeOf(user.otp, drift))
      t.equal(res.status, 401, `drift ${drift}`)
      t.equal(res.code, 'INVALID_OTP', `drift ${drift} refused`)
    }
    t.equal((await verify(mfaToken, codeOf(user.otp, -1))).status, 200, 'drift -1 accepted')
    t.equal((await verify(await mfaTokenOf(user), codeOf(user.otp, 1))).status, 200, 'drift +1 accepted')
  },
)

t.test(
  'setupLoginOtp: enrollment during login, confirmed by verifyLoginOtp with recovery codes',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    await setOtpEnabled(user, true)
    const mfaToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED')
    const setup = await setupLogin(mfaToken)
    t.equal(setup.status, 200)
    t.match(setup.data, { secret: /^[A-Z2-7]{32}$/, otpauthUri: /^otpauth:\/\/totp\//, qrCodeSvg: /^<svg/ })
    t.equal(new Date(setup.data.expiresAt).getTime(), clock.now() + 600_000, 'pending for 10 minutes')
    const uri = new URL(setup.data.otpauthUri)
    t.equal(uri.searchParams.get('secret'), setup.data.secret)
    t.equal(uri.searchParams.get('issuer'), `Tenant ${tenant.code}`, "the tenant's name as issuer")
    t.match(decodeURIComponent(uri.pathname), user.email, 'the email as account')
    const key = secretOfUri(setup.data.otpauthUri)

    const wrong = await verify(mfaToken, wrongCode({ key }))
    t.equal(wrong.status, 401)
    t.equal(wrong.code, 'INVALID_OTP', 'a wrong code of the new authenticator')
    const sessions = await sessionCount(tenant)
    const res = await verify(mfaToken, totpAt(key, clock.now()))
    t.equal(res.status, 200)
    t.match(res.data, { accessToken: String, refreshToken: String, user: { id: user.id } })
    t.equal(res.data.recoveryCodes?.length, 10, 'ten recovery codes')
    t.ok(
      (res.data.recoveryCodes as string[] | undefined)?.every((c) =>
        /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/.test(c),
      ),
    )
    t.equal(await sessionCount(tenant), sessions + 1, 'one session opened')
    const status = await call(app, 'getMyOtp', { token: res.data.accessToken })
    t.equal(status.status, 200)
    t.same(status.data, {
      otpEnabled: true,
      enrolled: true,
      pendingSetup: false,
      recoveryCodesLeft: 10,
      requiredByTenant: false,
    })
    const enabled = await auditRows(app, tenant.id, 'OTP_ENABLED')
    t.equal(enabled.length, 1, 'one OTP_ENABLED row')
    t.match(enabled[0], { success: true, user_id: user.id })
    const logins = (await loginRows(user)).filter((r) => r.success)
    t.equal(logins.length, 1, 'one LOGIN success row')

    clock.advance(STEP_MS)
    const next = await loginOtp(user)
    t.equal(next.code, 'OTP_REQUIRED', 'the next login asks for a code, not an enrollment')
    t.equal((await verify(mfaTokenIn(next), totpAt(key, clock.now()))).status, 200)
    const [recovery] = res.data.recoveryCodes as string[]
    t.equal((await loginOtp(user, recovery)).status, 200, 'a recovery code of the enrollment works')
    t.equal((await verify(mfaToken, totpAt(key, clock.now(), 1))).code, 'INVALID_CREDENTIALS', 'token used')
  },
)

t.test('verifyLoginOtp: a right code resets the failure count of the identifier', async (t) => {
  const tenant = await createTenant(app, { lockout: LOCKOUT })
  const user = await enrolledUser(tenant)
  const mfaToken = await mfaTokenOf(user)
  t.equal((await verify(mfaToken, wrongCode(user.otp))).code, 'INVALID_OTP')
  t.equal((await verify(mfaToken, wrongCode(user.otp))).code, 'INVALID_OTP')
  t.equal((await verify(mfaToken, codeOf(user.otp))).status, 200)
  clock.advance(STEP_MS)
  const again = await mfaTokenOf(user)
  t.equal((await verify(again, wrongCode(user.otp))).code, 'INVALID_OTP')
  t.equal((await verify(again, wrongCode(user.otp))).code, 'INVALID_OTP')
  t.equal((await loginOtp(user, codeOf(user.otp))).status, 200, 'still two failures from locking')
})

t.test(
  "verifyLoginOtp: a tenant's raised login budget (rateLimits.loginPerMinute) applies to it too",
  async (t) => {
    const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 100 } })
    const user = await enrolledUser(tenant)
    const ip = freshIp()
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const mfaToken = await mfaTokenOf(user, 'OTP_REQUIRED', ip)
      statuses.push((await verify(mfaToken, codeOf(user.otp), { ip })).status)
      clock.advance(STEP_MS)
    }
    t.same(
      statuses,
      [200, 200, 200, 200],
      `8 login calls from one address under a budget of 100 (${statuses.join(',')})`,
    )
  },
)

t.test(
  'verifyLoginOtp: a user who passes both factors 5 times is 5 successful logins in the metrics',
  async (t) => {
    const tenant = await createTenant(app, { rateLimits: { loginPerMinute: 100 } })
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const user = await enrolledUser(tenant)
    const ip = freshIp()
    for (let i = 1; i <= 5; i++) {
      const mfaToken = await mfaTokenOf(user, 'OTP_REQUIRED', ip)
      // Both steps from one address: the tenant's raised budget applies to the second step too.
      const res = await verify(mfaToken, codeOf(user.otp), { ip })
      t.equal(res.status, 200, `login ${i}`)
      clock.advance(STEP_MS)
    }
    const cred = { token: await tokenFor(app, admin) }
    const security = await call(app, 'getSecurityMetrics', cred)
    t.equal(security.status, 200)
    t.same(security.data.ipAnalysis, { topOffenders: [], suspiciousIps: [] }, 'no suspicious address')
    t.match(security.data.last24h, { successful: 6, failed: 0 }, 'the enrollment login and five more')
    t.equal(security.data.last5m.failedAttempts, 0)
    const metrics = await call(app, 'getTenantMetrics', cred)
    t.equal(metrics.status, 200)
    t.same(metrics.data.logins24h, { total: 6, successful: 6, failed: 0 })
    const stopped = (await loginRows(user)).filter((r) => r.error_message === 'OTP_REQUIRED')
    t.equal(stopped.length, 5, 'the five stopped logins are in the audit log all the same')
  },
)

t.test('setupLoginOtp, verifyLoginOtp: no log line carries a secret, a code or an mfaToken', async (t) => {
  const from = logLines.length
  const tenant = await createTenant(app, { mfa: { required: true } })
  const user = await createUser(app, tenant)
  const secrets: string[] = []
  const codes: string[] = []

  const enrollToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED')
  secrets.push(enrollToken)
  const setup = await setupLogin(enrollToken)
  t.equal(setup.status, 200)
  secrets.push(setup.data.secret, setup.data.otpauthUri)
  const key = secretOfUri(setup.data.otpauthUri)
  const wrong = wrongCode({ key })
  codes.push(wrong)
  t.equal((await verify(enrollToken, wrong)).code, 'INVALID_OTP')
  const first = totpAt(key, clock.now())
  codes.push(first)
  const enrolled = await verify(enrollToken, first)
  t.equal(enrolled.status, 200)
  const recoveryCodes = enrolled.data.recoveryCodes as string[]
  secrets.push(...recoveryCodes, ...recoveryCodes.map((c) => c.replace(/-/g, '')))

  clock.advance(STEP_MS)
  const mfaToken = await mfaTokenOf(user)
  secrets.push(mfaToken)
  const second = totpAt(key, clock.now())
  codes.push(second)
  t.equal((await verify(mfaToken, second)).status, 200)
  const [recovery] = recoveryCodes
  if (!recovery) throw new Error('no recovery code')
  t.equal((await verify(await mfaTokenOf(user), recovery)).status, 200)
  clock.advance(STEP_MS)
  const third = totpAt(key, clock.now())
  codes.push(third)
  t.equal((await loginOtp(user, third)).status, 200)

  const lines = logLines.slice(from)
  t.ok(lines.length > 8, `the requests were logged (${lines.length} lines)`)
  const all = lines.join('\n')
  t.notMatch(all, PASSWORD, 'no password')
  for (const s of secrets) t.notOk(all.includes(s), `no ${s.slice(0, 6)}…`)
  t.notOk(all.toLowerCase().includes(setup.data.secret.toLowerCase()), 'no secret in any case')
  t.notOk(all.includes(key.toString('hex')), 'no secret as hex')
  t.notOk(all.includes(key.toString('base64')), 'no secret as base64')
  for (const c of codes) t.notMatch(all, standalone(c), `no code ${c}`)
})
