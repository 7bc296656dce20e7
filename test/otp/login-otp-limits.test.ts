import t from 'tap'
import { call } from '../helpers/call.js'
import { auditRows, createTenant, createUser, freshIp, tokenFor, userWithToken } from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { loginOtpApp, LOCKOUT } from './support.js'

// The second factor at login against the account's state and the budgets (contract section 16): 403
// USER_INACTIVE, 409 OTP_NOT_ENROLLED and OTP_ALREADY_ENABLED, 429 from account throttling and the
// per-IP login budget.

const kit = await loginOtpApp(t)
const { app, clock, codeOf, wrongCode, loginOtp, mfaTokenOf, verify, setupLogin, sessionCount } = kit
const { loginRows, setOtpEnabled, enrolledUser } = kit

t.test('verifyLoginOtp: 403 USER_INACTIVE when the user was suspended after the password step', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  const admin = await userWithToken(app, user.tenant, { roles: ['admin'] })
  const off = await call(app, 'updateUser', admin.cred, {
    params: { userId: user.id },
    body: { status: 'SUSPENDED' },
  })
  t.equal(off.status, 200)
  const sessions = await sessionCount(user.tenant)
  const res = await verify(mfaToken, codeOf(user.otp))
  t.equal(res.status, 403)
  t.equal(res.code, 'USER_INACTIVE')
  t.equal(await sessionCount(user.tenant), sessions, 'no session opened')
  const rows = await loginRows(user)
  t.ok(
    rows.some((r) => !r.success && r.error_message === 'USER_INACTIVE'),
    'a LOGIN failure row',
  )
})

t.test('verifyLoginOtp: 409 OTP_NOT_ENROLLED for an enrollment mfaToken without a setup', async (t) => {
  const tenant = await createTenant(app, { mfa: { required: true } })
  const user = await createUser(app, tenant)
  const mfaToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED')
  const res = await verify(mfaToken, '123456')
  t.equal(res.status, 409)
  t.equal(res.code, 'OTP_NOT_ENROLLED')
  t.equal(await sessionCount(tenant), 0, 'no session opened')
  const setup = await setupLogin(mfaToken)
  t.equal(setup.status, 200, 'the token is still usable for the setup')
})

t.test('setupLoginOtp: 409 OTP_ALREADY_ENABLED when the user enrolled meanwhile', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  await setOtpEnabled(user, true)
  const mfaToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED')
  const as = { token: await tokenFor(app, user) }
  const setup = await call(app, 'setupMyOtp', as)
  t.equal(setup.status, 200)
  const key = secretOfUri(setup.data.otpauthUri)
  const confirm = await call(app, 'confirmMyOtp', as, { body: { code: totpAt(key, clock.now()) } })
  t.equal(confirm.status, 200)
  const res = await setupLogin(mfaToken)
  t.equal(res.status, 409)
  t.equal(res.code, 'OTP_ALREADY_ENABLED')
  const status = await call(app, 'getMyOtp', as)
  t.match(status.data, { enrolled: true, pendingSetup: false }, 'the enrolled secret is untouched')
})

t.test(
  'verifyLoginOtp: wrong codes count as failed logins of the identifier (account throttling)',
  async (t) => {
    const tenant = await createTenant(app, { lockout: LOCKOUT })
    const user = await enrolledUser(tenant)
    const mfaToken = await mfaTokenOf(user)
    for (let i = 1; i <= 3; i++) {
      const res = await verify(mfaToken, wrongCode(user.otp))
      t.equal(res.code, 'INVALID_OTP', `wrong code ${i}`)
    }
    const locked = await loginOtp(user)
    t.equal(locked.status, 429, 'the right password is refused: the identifier is locked')
    t.equal(locked.code, 'RATE_LIMIT_EXCEEDED')
    t.equal(locked.headers['retry-after'], '60')
    const inOne = await loginOtp(user, codeOf(user.otp))
    t.equal(inOne.status, 429, 'with a right otp too')
    const rows = await auditRows(app, tenant.id, 'ACCOUNT_LOCKED')
    t.ok(
      rows.some((r) => r.user_id === user.id),
      'an ACCOUNT_LOCKED row names the user',
    )
    clock.advance(60_000)
    t.equal((await loginOtp(user, codeOf(user.otp))).status, 200, 'the lock ends on time')
  },
)

t.test(
  'verifyLoginOtp: while the identifier is locked, an mfaToken issued before the lock takes no more codes',
  async (t) => {
    const tenant = await createTenant(app, { lockout: LOCKOUT })
    const user = await enrolledUser(tenant)
    const first = await mfaTokenOf(user)
    const second = await mfaTokenOf(user)
    for (let i = 1; i <= 3; i++) t.equal((await verify(first, wrongCode(user.otp))).code, 'INVALID_OTP')
    t.equal((await loginOtp(user)).status, 429, 'locked')
    const guess = await verify(second, wrongCode(user.otp))
    t.equal(guess.status, 429, 'a further guess with the earlier mfaToken is refused as locked')
    t.equal(guess.code, 'RATE_LIMIT_EXCEEDED')
    t.ok(Number(guess.headers['retry-after']) >= 1, 'Retry-After')
  },
)

t.test('verifyLoginOtp: calls spend the shared per-IP login budget (5 per minute)', async (t) => {
  const user = await enrolledUser()
  const ip = freshIp()
  const mfaToken = await mfaTokenOf(user, 'OTP_REQUIRED', ip)
  for (let i = 2; i <= 5; i++) {
    const res = await verify(mfaToken, wrongCode(user.otp), { ip })
    t.equal(res.code, 'INVALID_OTP', `call ${i} of the budget`)
  }
  const over = await verify(mfaToken, codeOf(user.otp), { ip })
  t.equal(over.status, 429, 'the 6th call from the address')
  t.equal(over.code, 'RATE_LIMIT_EXCEEDED')
  t.ok(Number(over.headers['retry-after']) >= 1, 'Retry-After')
  t.equal((await loginOtp(user, undefined, ip)).status, 429, 'POST /login shares the budget')
  t.equal((await verify(mfaToken, codeOf(user.otp))).status, 200, 'from another address the token works')
})

t.test('setupLoginOtp: calls spend the shared per-IP login budget (5 per minute)', async (t) => {
  const tenant = await createTenant(app, { mfa: { required: true } })
  const user = await createUser(app, tenant)
  const ip = freshIp()
  const mfaToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED', ip)
  for (let i = 2; i <= 5; i++) t.equal((await setupLogin(mfaToken, { ip })).status, 200, `call ${i}`)
  const over = await setupLogin(mfaToken, { ip })
  t.equal(over.status, 429, 'the 6th call from the address')
  t.equal(over.code, 'RATE_LIMIT_EXCEEDED')
  t.ok(Number(over.headers['retry-after']) >= 1, 'Retry-After')
})
