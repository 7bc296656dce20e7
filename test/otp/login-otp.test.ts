import t from 'tap'
import { randomBytes } from 'node:crypto'
import { buildTestApp } from '../helpers/app.js'
import { call, login, loginAs, mfaTokenIn, type As, type Res } from '../helpers/call.js'
import { enrollThroughMe } from '../helpers/secret-budget.js'
import {
  auditRows,
  createTenant,
  createUser,
  freshIp,
  PASSWORD,
  tokenFor,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { createManualClock } from '../../src/lib/clock.js'

// The second factor at login (contract section 16; openapi/paths/otp.yaml loginOtp, loginOtpSetup, and
// `otp` on POST /login): OTP_REQUIRED / OTP_ENROLLMENT_REQUIRED, the mfaToken's life, drift, replay,
// races, isolation, throttling, budgets, metrics and logs. Codes are computed by test/helpers/totp.ts from
// the otpauthUri the API returned, as an authenticator app would. The enrollment operations under /me/otp
// are tested in enrollment.test.ts.

const clock = createManualClock()
const logLines: string[] = []
const app = await buildTestApp(
  t,
  { LOG_LEVEL: 'debug' },
  { clock, logStream: { write: (l: string) => void logLines.push(l) } },
)

const STEP_MS = 30_000
const MFA_TOKEN = /^[A-Za-z0-9_-]{64}$/
const LOCKOUT = { enabled: true, threshold: 3, windowSeconds: 60, baseSeconds: 60, maxSeconds: 120 }

interface Enrolled {
  key: Buffer
  secret: string
  recoveryCodes: string[]
}

/** Enrolls the user through /me/otp (setup, confirm), then moves the clock one step on. */
function enroll(user: UserFx): Promise<Enrolled> {
  return enrollThroughMe(app, clock, user)
}

/** The code of the user's authenticator now, `drift` steps away. */
const codeOf = (e: { key: Buffer }, drift = 0) => totpAt(e.key, clock.now(), drift)

/** Six digits that no step from -2 to +2 gives now: a wrong code. */
function wrongCode(e: { key: Buffer }): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => codeOf(e, d)))
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0')
    if (!near.has(c)) return c
  }
}

/** POST /login with the fixture password and an optional `otp`. */
function loginOtp(user: UserFx, otp?: string, ip?: string): Promise<Res<'login'>> {
  return loginAs(app, user, { otp, ip })
}

/** POST /login without `otp`, expected to stop at the second factor with `code`; returns the mfaToken. */
async function mfaTokenOf(user: UserFx, code = 'OTP_REQUIRED', ip?: string): Promise<string> {
  const res = await loginOtp(user, undefined, ip)
  if (res.status !== 401 || res.code !== code) throw new Error(`expected ${code}: ${res.raw}`)
  return mfaTokenIn(res)
}

/** POST /login/otp. */
const verify = (mfaToken: string, code: string, as: As = {}) =>
  call(app, 'verifyLoginOtp', as, { body: { mfaToken, code } })

/** POST /login/otp/setup. */
const setupLogin = (mfaToken: string, as: As = {}) => call(app, 'setupLoginOtp', as, { body: { mfaToken } })

/** The tenant's session rows (all, revoked or not). */
async function sessionCount(tenant: TenantFx): Promise<number> {
  const row = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenant.id)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The user's mfaToken rows. */
async function mfaTokenRows(user: UserFx): Promise<number> {
  const row = await app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('mfa_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', user.tenant.id)
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The user's LOGIN audit rows. */
async function loginRows(user: UserFx) {
  return (await auditRows(app, user.tenant.id, 'LOGIN')).filter((r) => r.user_id === user.id)
}

/** An administrator of the tenant sets the user's otpEnabled flag (PATCH /users/{userId}). */
async function setOtpEnabled(user: UserFx, value: boolean): Promise<void> {
  const admin = await userWithToken(app, user.tenant, { roles: ['admin'] })
  const res = await call(app, 'updateUser', admin.cred, {
    params: { userId: user.id },
    body: { otpEnabled: value },
  })
  if (res.status !== 200) throw new Error(`PATCH failed: ${res.raw}`)
}

/** An enrolled user of a fresh tenant (or of the given one). */
async function enrolledUser(tenant?: TenantFx): Promise<UserFx & { otp: Enrolled }> {
  const user = await createUser(app, tenant ?? (await createTenant(app)))
  return { ...user, otp: await enroll(user) }
}

/** A regular expression that finds `text` in a log, not as a part of a longer run of digits. */
function standalone(text: string): RegExp {
  return new RegExp(`(?<![0-9.])${text.replace(/[^A-Za-z0-9]/g, '\\$&')}(?![0-9])`)
}

// ---------------------------------------------------------------------------------------------------
// POST /login with and without `otp`

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

// ---------------------------------------------------------------------------------------------------
// POST /login/otp

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
  const refreshed = await call(app, 'refresh', {}, { body: { refreshToken: res.data.refreshToken } })
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

// ---------------------------------------------------------------------------------------------------
// Drift under the manual clock

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

// ---------------------------------------------------------------------------------------------------
// Replay

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

// ---------------------------------------------------------------------------------------------------
// Races

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
    const codes = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('otp_recovery_codes')
      .select('id')
      .where('user_id', '=', user.id)
      .execute()
    t.equal(codes.length, 10, 'one set of recovery codes')
  },
)

// ---------------------------------------------------------------------------------------------------
// Isolation

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

// ---------------------------------------------------------------------------------------------------
// POST /login/otp/setup

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

// ---------------------------------------------------------------------------------------------------
// Throttling and budgets

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

// ---------------------------------------------------------------------------------------------------
// Metrics

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

// ---------------------------------------------------------------------------------------------------
// Logs

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
