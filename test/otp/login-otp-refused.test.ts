import t from 'tap'
import { randomBytes } from 'node:crypto'
import { call, login, loginAs, mfaTokenIn } from '../helpers/call.js'
import { auditRows, createTenant, createUser, freshIp, tokenFor } from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { loginOtpApp, MFA_TOKEN, recoveryRows, STEP_MS } from './support.js'

// The second factor at login when it keeps the user out with 401 (contract section 16): OTP_REQUIRED and
// OTP_ENROLLMENT_REQUIRED with an mfaToken, INVALID_OTP for a wrong, replayed or foreign code,
// INVALID_CREDENTIALS for an mfaToken spent, expired, used, never issued or tampered with, and the
// losers of concurrent calls. What lets the user in is in login-otp-success.test.ts.

const kit = await loginOtpApp(t)
const { app, clock, codeOf, wrongCode, loginOtp, mfaTokenOf, verify, setupLogin, sessionCount } = kit
const { mfaTokenRows, loginRows, setOtpEnabled, enrolledUser } = kit

t.test(
  'login: an enrolled user without otp gets 401 OTP_REQUIRED with an mfaToken, no session',
  async (t) => {
    const user = await enrolledUser()
    const sessions = await sessionCount(user.tenant)
    const rowsBefore = (await loginRows(user)).length
    const res = await loginOtp(user)
    t.equal(res.status, 401)
    t.equal(res.code, 'OTP_REQUIRED')
    t.equal(res.data, undefined, 'no tokens')
    t.match(res.body.details, { mfaToken: MFA_TOKEN, expiresIn: 300 })
    t.same(Object.keys(res.body.details ?? {}).sort(), ['expiresIn', 'mfaToken'])
    t.notMatch(res.raw, /accessToken|refreshToken/)
    t.equal(await sessionCount(user.tenant), sessions, 'no session opened')
    t.equal(await mfaTokenRows(user), 1, 'one mfaToken stored')
    const stored = await app.ctx.dbs
      .forTenant(user.tenant.id)
      .selectFrom('mfa_tokens')
      .select('token_hash')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow()
    t.not(stored.token_hash, mfaTokenIn(res), 'stored as a hash, not as itself')
    const rows = (await loginRows(user)).slice(rowsBefore)
    t.equal(rows.length, 1, 'one LOGIN row')
    t.match(rows[0], { success: false, error_message: 'OTP_REQUIRED' })
  },
)

t.test('login: an enrolled user with a wrong otp gets 401 INVALID_OTP, no session', async (t) => {
  const user = await enrolledUser()
  const sessions = await sessionCount(user.tenant)
  const rowsBefore = (await loginRows(user)).length
  for (const otp of [wrongCode(user.otp), 'zzzz-zzzz-zzzz']) {
    const res = await loginOtp(user, otp)
    t.equal(res.status, 401, otp)
    t.equal(res.code, 'INVALID_OTP', otp)
    t.equal(res.body.details, undefined, 'no mfaToken with INVALID_OTP')
  }
  t.equal(await sessionCount(user.tenant), sessions, 'no session opened')
  t.equal(await mfaTokenRows(user), 0, 'no mfaToken issued')
  const rows = (await loginRows(user)).slice(rowsBefore)
  t.equal(rows.length, 2)
  t.ok(
    rows.every((r) => !r.success && r.error_message === 'INVALID_OTP'),
    'LOGIN failure rows with INVALID_OTP',
  )
  t.equal((await loginOtp(user, codeOf(user.otp))).status, 200, 'the right code still works')
})

t.test(
  'login: a wrong password of an enrolled user is INVALID_CREDENTIALS and asks no second factor',
  async (t) => {
    const user = await enrolledUser()
    const unknown = await login(app, user.tenant.code, 'nobody@example.test', 'Wrong-password-17')
    for (const otp of [undefined, codeOf(user.otp)]) {
      const res = await loginAs(app, user, { otp, password: 'Wrong-password-17' })
      t.equal(res.status, 401)
      t.equal(res.code, 'INVALID_CREDENTIALS')
      t.equal(res.body.details, undefined, 'no mfaToken')
      t.equal(res.raw, unknown.raw, 'the same bytes as an unknown identifier')
    }
    t.equal(await mfaTokenRows(user), 0, 'no mfaToken stored')
    t.equal(
      (await loginOtp(user, codeOf(user.otp))).status,
      200,
      'the code sent with a wrong password was not used up',
    )
  },
)

t.test(
  'login: otpEnabled set by an administrator before any enrollment: 401 OTP_ENROLLMENT_REQUIRED',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    await setOtpEnabled(user, true)
    const sessions = await sessionCount(tenant)
    for (const otp of [undefined, '123456']) {
      const res = await loginOtp(user, otp)
      t.equal(res.status, 401)
      t.equal(res.code, 'OTP_ENROLLMENT_REQUIRED', `otp ${otp ?? 'absent'}`)
      t.match(res.body.details, { mfaToken: MFA_TOKEN, expiresIn: 300 })
    }
    t.equal(await sessionCount(tenant), sessions, 'no session opened')
    const rows = await loginRows(user)
    t.equal(rows.length, 2)
    t.ok(rows.every((r) => !r.success && r.error_message === 'OTP_ENROLLMENT_REQUIRED'))
    const wrong = await login(app, tenant.code, user.email, 'Wrong-password-17')
    t.equal(wrong.code, 'INVALID_CREDENTIALS', 'the password comes first')
  },
)

t.test('login: every user of a tenant with mfa.required gets 401 OTP_ENROLLMENT_REQUIRED', async (t) => {
  const tenant = await createTenant(app, { mfa: { required: true } })
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const plain = await createUser(app, tenant)
  for (const user of [admin, plain]) {
    const res = await loginOtp(user)
    t.equal(res.status, 401)
    t.equal(res.code, 'OTP_ENROLLMENT_REQUIRED')
    t.match(res.body.details, { mfaToken: MFA_TOKEN, expiresIn: 300 })
  }
  t.equal(await sessionCount(tenant), 0, 'no session opened')
})

t.test('verifyLoginOtp: 401 INVALID_OTP for a wrong code; the mfaToken stays usable', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  const rowsBefore = (await loginRows(user)).length
  for (const code of [wrongCode(user.otp), 'aaaa-bbbb-cccc', '000 000']) {
    const res = await verify(mfaToken, code)
    t.equal(res.status, 401, code)
    t.equal(res.code, 'INVALID_OTP', code)
  }
  const failures = (await loginRows(user)).slice(rowsBefore)
  t.equal(failures.length, 3)
  t.ok(failures.every((r) => !r.success && r.error_message === 'INVALID_OTP'))
  const ok = await verify(mfaToken, codeOf(user.otp))
  t.equal(ok.status, 200, 'the same mfaToken with the right code')
})

t.test('verifyLoginOtp: after 5 wrong codes the mfaToken is spent (INVALID_CREDENTIALS)', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  for (let i = 1; i <= 5; i++) {
    t.equal((await verify(mfaToken, wrongCode(user.otp))).code, 'INVALID_OTP', `wrong code ${i}`)
  }
  const right = codeOf(user.otp)
  const res = await verify(mfaToken, right)
  t.equal(res.status, 401)
  t.equal(res.code, 'INVALID_CREDENTIALS', 'the right code no longer helps')
  t.equal(await mfaTokenRows(user), 0, 'the spent token is gone')
  t.equal((await loginOtp(user, right)).status, 200, 'the code was not used up by the spent token')
})

t.test('verifyLoginOtp: an expired mfaToken (after 300 s) is INVALID_CREDENTIALS', async (t) => {
  const user = await enrolledUser()
  const early = await mfaTokenOf(user)
  const late = await mfaTokenOf(user)
  const [recovery] = user.otp.recoveryCodes
  if (!recovery) throw new Error('no recovery code')
  clock.advance(299_000)
  t.equal((await verify(early, codeOf(user.otp))).status, 200, 'alive at 299 s')
  clock.advance(2_000)
  const res = await verify(late, recovery)
  t.equal(res.status, 401)
  t.equal(res.code, 'INVALID_CREDENTIALS', 'expired at 301 s, even with a valid recovery code')
  const rows = (await loginRows(user)).filter((r) => r.error_message === 'INVALID_CREDENTIALS')
  t.equal(rows.length, 0, 'the LOGIN row names no user for an unknown token')
  t.equal((await loginOtp(user, recovery)).status, 200, 'the recovery code was not used up')
})

t.test('verifyLoginOtp: a used mfaToken is INVALID_CREDENTIALS', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  t.equal((await verify(mfaToken, codeOf(user.otp))).status, 200)
  const [recovery] = user.otp.recoveryCodes
  if (!recovery) throw new Error('no recovery code')
  const res = await verify(mfaToken, recovery)
  t.equal(res.status, 401)
  t.equal(res.code, 'INVALID_CREDENTIALS')
})

t.test('verifyLoginOtp: a token that was never issued is INVALID_CREDENTIALS', async (t) => {
  const user = await enrolledUser()
  const random = randomBytes(48).toString('base64url')
  t.equal(random.length, 64)
  const withTenant = Buffer.concat([
    Buffer.from(user.tenant.id.replace(/-/g, ''), 'hex'),
    randomBytes(32),
  ]).toString('base64url')
  const done = await verify(await mfaTokenOf(user), codeOf(user.otp))
  const [recovery] = user.otp.recoveryCodes
  if (!recovery) throw new Error('no recovery code')
  const candidates: [string, string][] = [
    ['a random 64-char string', random],
    ["a random token naming the user's tenant", withTenant],
    ['a short string', 'abc'],
    ['a refresh token of the user', done.data.refreshToken],
  ]
  for (const [name, token] of candidates) {
    const res = await verify(token, recovery)
    t.equal(res.status, 401, name)
    t.equal(res.code, 'INVALID_CREDENTIALS', name)
  }
  t.equal((await loginOtp(user, recovery)).status, 200, 'the recovery code was not used up')
})

t.test('verifyLoginOtp: a code accepted once is refused on every path that takes one', async (t) => {
  const user = await enrolledUser()
  const code = codeOf(user.otp)
  const first = await loginOtp(user, code)
  t.equal(first.status, 200, 'accepted once at POST /login')
  const as = { token: first.data.accessToken }
  const viaLogin = await loginOtp(user, code)
  t.equal(viaLogin.code, 'INVALID_OTP', 'POST /login refuses it')
  const viaOtp = await verify(await mfaTokenOf(user), code)
  t.equal(viaOtp.code, 'INVALID_OTP', 'POST /login/otp refuses it')
  const renew = await call(app, 'renewMyRecoveryCodes', as, { body: { code } })
  t.equal(renew.status, 401)
  t.equal(renew.code, 'INVALID_OTP', 'POST /me/otp/recovery-codes refuses it')
  const remove = await call(app, 'disableMyOtp', as, { body: { code } })
  t.equal(remove.status, 401)
  t.equal(remove.code, 'INVALID_OTP', 'DELETE /me/otp refuses it')
  const status = await call(app, 'getMyOtp', as)
  t.match(status.data, { otpEnabled: true, enrolled: true, recoveryCodesLeft: 10 }, 'nothing changed')

  clock.advance(STEP_MS)
  const next = codeOf(user.otp)
  t.equal((await verify(await mfaTokenOf(user), next)).status, 200, 'accepted once at POST /login/otp')
  t.equal((await loginOtp(user, next)).code, 'INVALID_OTP', 'then POST /login refuses it')
  t.equal((await verify(await mfaTokenOf(user), next)).code, 'INVALID_OTP', 'and POST /login/otp')
})

t.test('verifyLoginOtp: 10 concurrent calls with one code and one mfaToken: exactly one 200', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  const code = codeOf(user.otp)
  const sessions = await sessionCount(user.tenant)
  const results = await Promise.all(Array.from({ length: 10 }, () => verify(mfaToken, code)))
  const statuses = results.map((r) => r.status)
  t.equal(statuses.filter((s) => s === 200).length, 1, `exactly one 200 (${statuses.join(',')})`)
  t.equal(statuses.filter((s) => s === 401).length, 9, 'the rest 401')
  t.equal(await sessionCount(user.tenant), sessions + 1, 'one session opened')
})

t.test('login: 10 concurrent logins with the same valid otp: exactly one 200', async (t) => {
  const user = await enrolledUser()
  const code = codeOf(user.otp)
  const sessions = await sessionCount(user.tenant)
  const results = await Promise.all(Array.from({ length: 10 }, () => loginOtp(user, code, freshIp())))
  const statuses = results.map((r) => r.status)
  t.equal(statuses.filter((s) => s === 200).length, 1, `exactly one 200 (${statuses.join(',')})`)
  t.ok(
    results.filter((r) => r.status !== 200).every((r) => r.status === 401 && r.code === 'INVALID_OTP'),
    'the rest INVALID_OTP',
  )
  t.equal(await sessionCount(user.tenant), sessions + 1, 'one session opened')
})

t.test(
  'verifyLoginOtp: 10 concurrent enrollment confirmations with one mfaToken: exactly one 200',
  async (t) => {
    const tenant = await createTenant(app, { mfa: { required: true } })
    const user = await createUser(app, tenant)
    const mfaToken = await mfaTokenOf(user, 'OTP_ENROLLMENT_REQUIRED')
    const setup = await setupLogin(mfaToken)
    const code = totpAt(secretOfUri(setup.data.otpauthUri), clock.now())
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(mfaToken, code)))
    const statuses = results.map((r) => r.status)
    t.equal(statuses.filter((s) => s === 200).length, 1, `exactly one 200 (${statuses.join(',')})`)
    t.ok(
      results.filter((r) => r.status !== 200).every((r) => r.status === 401),
      'the rest 401',
    )
    t.equal(await sessionCount(tenant), 1, 'one session opened')
    t.equal((await auditRows(app, tenant.id, 'OTP_ENABLED')).length, 1, 'one OTP_ENABLED row')
    const codes = await recoveryRows(app, user)
    t.equal(codes.length, 10, 'one set of recovery codes')
  },
)

t.test(
  "verifyLoginOtp: an mfaToken is bound to its user: another user's code never completes it",
  async (t) => {
    const a = await enrolledUser()
    const b = await enrolledUser(a.tenant)
    const c = await enrolledUser()
    const mfaToken = await mfaTokenOf(a)
    const [bRecovery] = b.otp.recoveryCodes
    if (!bRecovery) throw new Error('no recovery code')
    const foreign: [string, string][] = [
      ["B's TOTP code (same tenant)", codeOf(b.otp)],
      ["B's recovery code", bRecovery],
      ["C's TOTP code (another tenant)", codeOf(c.otp)],
    ]
    for (const [name, code] of foreign) {
      if (code === codeOf(a.otp)) continue // one chance in a million: the same six digits
      const res = await verify(mfaToken, code)
      t.equal(res.status, 401, name)
      t.equal(res.code, 'INVALID_OTP', name)
    }
    const ok = await verify(mfaToken, codeOf(a.otp))
    t.equal(ok.status, 200)
    t.equal(ok.data.user.id, a.id, "A's login, with A's code")
    t.equal((await loginOtp(b, bRecovery)).status, 200, "B's recovery code was not used up")
    t.equal((await loginOtp(c, codeOf(c.otp))).status, 200, "C's code was not used up")
  },
)

t.test('verifyLoginOtp: an mfaToken whose tenant part was changed is INVALID_CREDENTIALS', async (t) => {
  const user = await enrolledUser()
  const other = await createTenant(app)
  const mfaToken = await mfaTokenOf(user)
  const bytes = Buffer.from(mfaToken, 'base64url')
  const otherTenant = Buffer.concat([Buffer.from(other.id.replace(/-/g, ''), 'hex'), bytes.subarray(16)])
  const flipped = (mfaToken.startsWith('A') ? 'B' : 'A') + mfaToken.slice(1)
  const tampered: [string, string][] = [
    ['the tenant part names another tenant', otherTenant.toString('base64url')],
    ['the first character changed', flipped],
    ['the first characters changed', 'AAAAAAAA' + mfaToken.slice(8)],
  ]
  for (const [name, token] of tampered) {
    t.equal(token.length, 64)
    const res = await verify(token, codeOf(user.otp))
    t.equal(res.status, 401, name)
    t.equal(res.code, 'INVALID_CREDENTIALS', name)
  }
  t.equal((await verify(mfaToken, codeOf(user.otp))).status, 200, 'the real token is intact')
})

t.test('setupLoginOtp: 401 INVALID_CREDENTIALS for an OTP_REQUIRED token and an unknown one', async (t) => {
  const user = await enrolledUser()
  const mfaToken = await mfaTokenOf(user)
  const res = await setupLogin(mfaToken)
  t.equal(res.status, 401)
  t.equal(res.code, 'INVALID_CREDENTIALS', 'not an enrollment token')
  for (const token of [randomBytes(48).toString('base64url'), 'x']) {
    const unknown = await setupLogin(token)
    t.equal(unknown.status, 401)
    t.equal(unknown.code, 'INVALID_CREDENTIALS')
  }
  const status = await call(app, 'getMyOtp', { token: await tokenFor(app, user) })
  t.equal(status.data.pendingSetup, false, 'no setup was made')
  t.equal((await verify(mfaToken, codeOf(user.otp))).status, 200, 'the token still completes its login')
})
