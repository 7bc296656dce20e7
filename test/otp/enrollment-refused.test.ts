import t from 'tap'
import { loginAs } from '../helpers/call.js'
import { createTenant, tokenFor, userWithToken } from '../helpers/fixtures.js'
import { enrollmentApp, PENDING_MS, STEP_MS } from './support.js'

// The second factor's operations under /me/otp, and updateUser's otpEnabled, when they refuse (contract
// section 16): 401 INVALID_OTP, 403, 404 USER_NOT_FOUND, 409 OTP_ALREADY_ENABLED and OTP_NOT_ENROLLED,
// 429; and what each refusal leaves as it was. The successes are in enrollment-success.test.ts.

const kit = await enrollmentApp(t)
const { app, clock, getOtp, setupOtp, confirmOtp, renewCodes, disableOtp, patchUser, codeNow } = kit
const { nextCode, wrongCode, startSetup, enrolledMember, otpRowOf, recoveryRowsOf, otpEnabledInDb } = kit
const { deleteUserRow, rowsOf } = kit

t.test("getMyOtp: 404 USER_NOT_FOUND for a deleted user's still-valid access token", async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  await deleteUserRow(user)
  const res = await getOtp(cred)
  t.equal(res.status, 404)
  t.equal(res.code, 'USER_NOT_FOUND')
})

t.test('setupMyOtp: 409 OTP_ALREADY_ENABLED once enrolled; the confirmed secret is kept', async (t) => {
  const tenant = await createTenant(app)
  const { user, cred, key } = await enrolledMember(tenant)
  const before = await otpRowOf(user)
  const res = await setupOtp(cred)
  t.equal(res.status, 409)
  t.equal(res.code, 'OTP_ALREADY_ENABLED')
  const after = await otpRowOf(user)
  t.equal(after?.secret_enc, before?.secret_enc, 'the secret is unchanged')
  t.equal(after?.pending_secret_enc, null, 'no pending secret was stored')
  t.equal(
    (await loginAs(app, user, { otp: nextCode(key) })).status,
    200,
    'the enrolled authenticator still logs in',
  )
})

t.test("setupMyOtp: 404 USER_NOT_FOUND for a deleted user's still-valid access token", async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  await deleteUserRow(user)
  const res = await setupOtp(cred)
  t.equal(res.status, 404)
  t.equal(res.code, 'USER_NOT_FOUND')
})

t.test(
  'confirmMyOtp: 401 INVALID_OTP for a wrong code, a recovery-code form and codes two steps away; one step back is accepted',
  async (t) => {
    const tenant = await createTenant(app)
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const key = await startSetup(cred)
    const window = new Set([-1, 0, 1].map((d) => codeNow(key, d)))
    const refused = [wrongCode(key), 'abcd-efgh-ijkl', ...[-2, 2].map((d) => codeNow(key, d))].filter(
      (c) => !window.has(c),
    )
    for (const code of refused) {
      const res = await confirmOtp(cred, code)
      t.equal(res.status, 401, code)
      t.equal(res.code, 'INVALID_OTP')
    }
    t.equal((await getOtp(cred)).data.pendingSetup, true, 'the pending setup survives wrong codes')
    t.equal(await otpEnabledInDb(user), false)
    const res = await confirmOtp(cred, codeNow(key, -1))
    t.equal(res.status, 200, 'a code one step old (a slow clock) confirms')
  },
)

t.test(
  'confirmMyOtp: 409 OTP_NOT_ENROLLED without a setup, after the 10-minute expiry, and once confirmed',
  async (t) => {
    const tenant = await createTenant(app)
    const none = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await confirmOtp(none.cred, '123456')
    t.equal(res.status, 409)
    t.equal(res.code, 'OTP_NOT_ENROLLED')

    const late = await userWithToken(app, tenant, { roles: ['user'] })
    const onTime = await userWithToken(app, tenant, { roles: ['user'] })
    const lateKey = await startSetup(late.cred)
    const onTimeKey = await startSetup(onTime.cred)
    clock.advance(PENDING_MS - 1000)
    t.equal((await confirmOtp(onTime.cred, codeNow(onTimeKey))).status, 200, 'at 9 min 59 s: still pending')
    clock.advance(2000)
    t.equal((await getOtp(late.cred)).data.pendingSetup, false, 'at 10 min 1 s: no longer pending')
    // Why fresh tokens: confirming needs a sign-in of the last 600 s (section 22), and those are older now.
    const expired = await confirmOtp({ token: await tokenFor(app, late) }, codeNow(lateKey))
    t.equal(expired.status, 409, 'a right code of an expired setup')
    t.equal(expired.code, 'OTP_NOT_ENROLLED')
    t.equal(await otpEnabledInDb(late), false)

    const again = await confirmOtp({ token: await tokenFor(app, onTime) }, nextCode(onTimeKey))
    t.equal(again.status, 409, 'nothing pending once confirmed')
    t.equal(again.code, 'OTP_NOT_ENROLLED')

    const rows = await rowsOf(late, 'OTP_ENABLED')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [[false, 'OTP_NOT_ENROLLED']],
      'the failure is audited',
    )
  },
)

t.test(
  'confirmMyOtp: 429 RATE_LIMIT_EXCEEDED after 5 code checks from one address, a budget shared with POST /login; no audit row for it',
  async (t) => {
    const tenant = await createTenant(app)
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const key = await startSetup(cred)
    const ip = '192.0.2.77'
    const at = { ...cred, ip }
    for (let i = 0; i < 2; i++) t.equal((await loginAs(app, user, { ip })).status, 200, `login ${i + 1}`)
    for (let i = 0; i < 3; i++) t.equal((await confirmOtp(at, wrongCode(key))).code, 'INVALID_OTP')
    const res = await confirmOtp(at, codeNow(key))
    t.equal(res.status, 429, 'the sixth request of the login budget')
    t.equal(res.code, 'RATE_LIMIT_EXCEEDED')
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After')
    t.equal((await rowsOf(user, 'OTP_ENABLED')).length, 3, 'the refused call wrote no row')
    t.equal(await otpEnabledInDb(user), false)
    t.equal(
      (await confirmOtp(cred, codeNow(key))).status,
      200,
      'from another address the right code confirms',
    )
  },
)

t.test(
  'renewMyRecoveryCodes: 401 INVALID_OTP for a wrong code and for a replayed TOTP code; the set is kept',
  async (t) => {
    const tenant = await createTenant(app)
    const { user, cred, key, recoveryCodes } = await enrolledMember(tenant)
    const confirming = codeNow(key)
    const replayOfConfirm = await renewCodes(cred, confirming)
    t.equal(replayOfConfirm.status, 401, "the confirming code's step is not accepted again")
    t.equal(replayOfConfirm.code, 'INVALID_OTP')

    const wrong = await renewCodes(cred, wrongCode(key))
    t.equal(wrong.status, 401)
    t.equal(wrong.code, 'INVALID_OTP')

    const code = nextCode(key)
    const first = await renewCodes(cred, code)
    t.equal(first.status, 200)
    const replay = await renewCodes(cred, code)
    t.equal(replay.status, 401, 'the same code in the same step')
    t.equal(replay.code, 'INVALID_OTP')
    const viaLogin = await loginAs(app, user, { otp: code })
    t.equal(viaLogin.code, 'INVALID_OTP', 'nor at login')

    const kept = first.data.recoveryCodes as string[]
    t.equal((await getOtp(cred)).data.recoveryCodesLeft, 10, 'the refused calls changed nothing')
    t.equal(
      (await loginAs(app, user, { otp: kept[0] })).status,
      200,
      'the set of the last success is the live one',
    )
    t.equal(
      (await loginAs(app, user, { otp: recoveryCodes[0] })).code,
      'INVALID_OTP',
      'the set of the enrollment is void',
    )

    const rows = await rowsOf(user, 'OTP_RECOVERY_CODES_RENEWED')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [
        [false, 'INVALID_OTP'],
        [false, 'INVALID_OTP'],
        [true, null],
        [false, 'INVALID_OTP'],
      ],
    )
  },
)

t.test(
  'renewMyRecoveryCodes: 409 OTP_NOT_ENROLLED without a confirmed factor (none, or only a pending setup)',
  async (t) => {
    const tenant = await createTenant(app)
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const none = await renewCodes(cred, '123456')
    t.equal(none.status, 409)
    t.equal(none.code, 'OTP_NOT_ENROLLED')
    const key = await startSetup(cred)
    const pending = await renewCodes(cred, codeNow(key))
    t.equal(pending.status, 409, 'a pending setup is no factor yet')
    t.equal(pending.code, 'OTP_NOT_ENROLLED')
    t.equal((await recoveryRowsOf(user)).length, 0, 'no recovery codes were made')
    t.equal((await confirmOtp(cred, codeNow(key))).status, 200, 'the pending setup is untouched')
    const rows = await rowsOf(user, 'OTP_RECOVERY_CODES_RENEWED')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [
        [false, 'OTP_NOT_ENROLLED'],
        [false, 'OTP_NOT_ENROLLED'],
      ],
    )
  },
)

t.test('disableMyOtp: 401 INVALID_OTP for a wrong code; the factor is kept', async (t) => {
  const tenant = await createTenant(app)
  const { user, cred, key } = await enrolledMember(tenant)
  clock.advance(STEP_MS)
  for (const code of [wrongCode(key), 'aaaa-bbbb-cccc']) {
    const res = await disableOtp(cred, code)
    t.equal(res.status, 401, code)
    t.equal(res.code, 'INVALID_OTP')
  }
  t.equal(await otpEnabledInDb(user), true)
  t.ok((await otpRowOf(user))?.secret_enc, 'the secret is kept')
  t.equal((await getOtp(cred)).data.recoveryCodesLeft, 10)
  t.equal((await loginAs(app, user)).code, 'OTP_REQUIRED', 'a login still needs the code')
  const rows = await rowsOf(user, 'OTP_DISABLED')
  t.same(
    rows.map((r) => [r.success, r.error_message]),
    [
      [false, 'INVALID_OTP'],
      [false, 'INVALID_OTP'],
    ],
  )
})

t.test(
  'disableMyOtp: 403 FORBIDDEN when the tenant requires a second factor, even with a valid code; the factor is kept',
  async (t) => {
    const tenant = await createTenant(app, { mfa: { required: true } })
    const { user, cred, key } = await enrolledMember(tenant)
    const res = await disableOtp(cred, nextCode(key))
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
    t.ok((await otpRowOf(user))?.secret_enc, 'the secret is kept')
    t.equal(await otpEnabledInDb(user), true)
    const rows = await rowsOf(user, 'OTP_DISABLED')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [[false, 'FORBIDDEN']],
    )
  },
)

t.test('disableMyOtp: 409 OTP_NOT_ENROLLED without a confirmed factor', async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  const res = await disableOtp(cred, '123456')
  t.equal(res.status, 409)
  t.equal(res.code, 'OTP_NOT_ENROLLED')
  const key = await startSetup(cred)
  const pending = await disableOtp(cred, codeNow(key))
  t.equal(pending.status, 409, 'a pending setup is no factor yet')
  t.equal(pending.code, 'OTP_NOT_ENROLLED')
  t.equal((await getOtp(cred)).data.pendingSetup, true, 'the pending setup is untouched')
  t.same(
    (await rowsOf(user, 'OTP_DISABLED')).map((r) => [r.success, r.error_message]),
    [
      [false, 'OTP_NOT_ENROLLED'],
      [false, 'OTP_NOT_ENROLLED'],
    ],
  )
})

t.test(
  "updateUser: 403 ROLE_HIERARCHY_VIOLATION when an administrator sets a peer administrator's otpEnabled; the peer's factor is kept",
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const peer = await enrolledMember(tenant, { roles: ['admin'] })
    const reset = await patchUser(admin.cred, peer.user.id, { otpEnabled: false })
    t.equal(reset.status, 403)
    t.equal(reset.code, 'ROLE_HIERARCHY_VIOLATION')
    t.ok((await otpRowOf(peer.user))?.secret_enc, 'the secret is kept')
    t.equal((await recoveryRowsOf(peer.user)).length, 10, 'the recovery codes are kept')
    t.equal(await otpEnabledInDb(peer.user), true)
    t.equal((await rowsOf(peer.user, 'OTP_DISABLED')).length, 0, 'no OTP_DISABLED row')

    const other = await userWithToken(app, tenant, { roles: ['admin'] })
    const flag = await patchUser(admin.cred, other.id, { otpEnabled: true })
    t.equal(flag.status, 403)
    t.equal(flag.code, 'ROLE_HIERARCHY_VIOLATION')
    t.equal(await otpEnabledInDb(other), false)
    t.equal((await loginAs(app, other)).status, 200, "the peer's login is unchanged")
  },
)

t.test(
  'updateUser: an administrator cannot remove its own second factor by PATCH without a code (a stolen access token alone must not)',
  async (t) => {
    const tenant = await createTenant(app)
    const self = await enrolledMember(tenant, { roles: ['admin'] })
    const res = await patchUser(self.cred, self.user.id, { otpEnabled: false })
    t.equal(res.status, 403, 'refused like resetUserPassword on oneself')
    t.equal(res.code, 'FORBIDDEN')
    t.ok((await otpRowOf(self.user))?.secret_enc, 'the factor is kept')
  },
)
