import t from 'tap'
import { loginAs } from '../helpers/call.js'
import { createTenant, userWithToken } from '../helpers/fixtures.js'
import { base32Decode, secretOfUri } from '../helpers/totp.js'
import { enrollmentApp, NOT_ENROLLED, PENDING_MS, RECOVERY_SHAPE } from './support.js'

// The second factor managed by its user (getMyOtp, setupMyOtp, confirmMyOtp, renewMyRecoveryCodes,
// disableMyOtp: openapi/paths/otp.yaml) and by administrators (updateUser's otpEnabled), contract
// section 16, when the call succeeds. The refusals are in enrollment-refused.test.ts; logins that ask for
// the factor in login-otp-*.test.ts.

const kit = await enrollmentApp(t)
const { app, clock, getOtp, setupOtp, confirmOtp, renewCodes, disableOtp, patchUser, codeNow } = kit
const { nextCode, wrongCode, startSetup, enrolledMember, tdb, otpRowOf, recoveryRowsOf } = kit
const { otpEnabledInDb, rowsOf } = kit

t.test(
  'getMyOtp: 200 the status before a setup, while pending, once confirmed, and after a recovery code is used at login',
  async (t) => {
    const tenant = await createTenant(app)
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const before = await getOtp(cred)
    t.equal(before.status, 200)
    t.same(before.data, NOT_ENROLLED)

    const key = await startSetup(cred)
    t.same((await getOtp(cred)).data, { ...NOT_ENROLLED, pendingSetup: true }, 'pending, not yet enrolled')

    const confirmed = await confirmOtp(cred, codeNow(key))
    t.equal(confirmed.status, 200)
    t.same((await getOtp(cred)).data, {
      otpEnabled: true,
      enrolled: true,
      pendingSetup: false,
      recoveryCodesLeft: 10,
      requiredByTenant: false,
    })

    const recovery = confirmed.data.recoveryCodes[3] as string
    const res = await loginAs(app, user, { otp: recovery })
    t.equal(res.status, 200, 'a recovery code logs in')
    t.equal((await getOtp(cred)).data.recoveryCodesLeft, 9, 'one recovery code used')
  },
)

t.test('getMyOtp: 200 requiredByTenant when the tenant requires a second factor', async (t) => {
  const tenant = await createTenant(app, { mfa: { required: true } })
  const { cred } = await userWithToken(app, tenant, { roles: ['user'] })
  const res = await getOtp(cred)
  t.equal(res.status, 200)
  t.same(res.data, { ...NOT_ENROLLED, requiredByTenant: true }, "the user's own flag stays false")
})

t.test(
  'setupMyOtp: 200 a pending secret: base32, an otpauth URI of the tenant name and the email, an SVG QR code, 10 minutes',
  async (t) => {
    const tenant = await createTenant(app)
    const tenantName = (await app.ctx.tenants.byId(tenant.id))?.name ?? ''
    t.ok(tenantName, 'the tenant has a name')
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await setupOtp(cred)
    t.equal(res.status, 200)
    const { secret, otpauthUri, qrCodeSvg, expiresAt } = res.data
    t.match(secret, /^[A-Z2-7]{32}$/, 'base32, 32 characters')
    t.equal(base32Decode(secret).length, 20, '160 bits')

    const uri = new URL(otpauthUri)
    t.equal(uri.protocol, 'otpauth:')
    t.equal(uri.host, 'totp')
    t.equal(decodeURIComponent(uri.pathname.slice(1)), `${tenantName}:${user.email}`, 'label issuer:account')
    t.equal(uri.searchParams.get('issuer'), tenantName)
    t.equal(uri.searchParams.get('secret'), secret, 'the URI carries the same secret')
    t.match(otpauthUri, /[?&]algorithm=SHA1(&|$)/)
    t.match(otpauthUri, /[?&]digits=6(&|$)/)
    t.match(otpauthUri, /[?&]period=30(&|$)/)
    t.same(secretOfUri(otpauthUri), base32Decode(secret))

    t.ok(qrCodeSvg.startsWith('<svg'), 'an SVG document')
    t.match(qrCodeSvg, /<\/svg>\s*$/)
    t.equal(Date.parse(expiresAt), clock.now() + PENDING_MS, 'expires 10 minutes from now')

    const again = await setupOtp(cred, {})
    t.equal(again.status, 200, 'an empty JSON object is accepted as the body too')
  },
)

t.test('setupMyOtp: the account is the username when the user has no email', async (t) => {
  const tenant = await createTenant(app)
  const username = `otp.${Math.random().toString(36).slice(2, 10)}`
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'], username })
  await tdb(user)
    .updateTable('users')
    .set({ email: null })
    .where('tenant_id', '=', tenant.id)
    .where('id', '=', user.id)
    .execute()
  const res = await setupOtp(cred)
  t.equal(res.status, 200)
  const label = decodeURIComponent(new URL(res.data.otpauthUri).pathname.slice(1))
  t.equal(label.slice(label.indexOf(':') + 1), username)
})

t.test(
  "setupMyOtp: a second setup replaces the first: the first secret's code is refused (401 INVALID_OTP), the second's confirms",
  async (t) => {
    const tenant = await createTenant(app)
    const { cred } = await userWithToken(app, tenant, { roles: ['user'] })
    const first = await startSetup(cred)
    const second = await startSetup(cred)
    t.notSame(first, second, 'a new secret')
    const window = new Set([-1, 0, 1].map((d) => codeNow(second, d)))
    const stale = codeNow(first)
    if (!window.has(stale)) {
      const res = await confirmOtp(cred, stale)
      t.equal(res.status, 401)
      t.equal(res.code, 'INVALID_OTP')
    }
    const res = await confirmOtp(cred, codeNow(second))
    t.equal(res.status, 200)
    t.equal(res.data.otpEnabled, true)
  },
)

t.test('setupMyOtp: the pending secret is stored sealed, never as its base32 or its bytes', async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  const res = await setupOtp(cred)
  const secret = res.data.secret as string
  const rawHex = base32Decode(secret).toString('hex')
  const rawB64 = base32Decode(secret).toString('base64')
  const pending = (await otpRowOf(user))?.pending_secret_enc ?? ''
  t.ok(pending.length > 0, 'a pending secret is stored')
  for (const form of [secret, secret.toLowerCase(), rawHex, rawB64]) {
    t.notOk(pending.includes(form), `the row does not hold the secret as ${form.slice(0, 6)}…`)
  }
  await confirmOtp(cred, codeNow(secretOfUri(res.data.otpauthUri)))
  const confirmed = (await otpRowOf(user))?.secret_enc ?? ''
  t.ok(confirmed.length > 0, 'the confirmed secret is stored')
  t.notOk(confirmed.includes(secret) || confirmed.includes(rawHex), 'sealed once confirmed too')
})

t.test(
  'confirmMyOtp: 200 otpEnabled and 10 distinct recovery codes, kept only as hashes; users.otp_enabled set; OTP_ENABLED rows for failure and success',
  async (t) => {
    const tenant = await createTenant(app)
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const key = await startSetup(cred)
    t.equal((await confirmOtp(cred, wrongCode(key))).code, 'INVALID_OTP')
    t.equal(await otpEnabledInDb(user), false, 'a wrong code enables nothing')

    const res = await confirmOtp(cred, codeNow(key))
    t.equal(res.status, 200)
    t.equal(res.data.otpEnabled, true)
    const codes = res.data.recoveryCodes as string[]
    t.equal(codes.length, 10)
    t.equal(new Set(codes).size, 10, 'distinct')
    for (const c of codes) t.match(c, RECOVERY_SHAPE)
    t.equal(await otpEnabledInDb(user), true, 'users.otp_enabled is true')

    const stored = await recoveryRowsOf(user)
    t.equal(stored.length, 10)
    const plain = new Set(codes.flatMap((c) => [c, c.replace(/-/g, ''), c.toUpperCase()]))
    t.ok(
      stored.every((r) => !plain.has(r.code_hash) && /^[0-9a-f]{64}$/.test(r.code_hash)),
      'only hashes are stored',
    )
    t.ok(
      stored.every((r) => r.used_at === null),
      'none used',
    )
    const row = await otpRowOf(user)
    t.ok(row?.secret_enc && row.confirmed_at, 'the secret is confirmed')
    t.equal(row?.pending_secret_enc, null, 'nothing pending any more')

    const rows = await rowsOf(user, 'OTP_ENABLED')
    t.same(
      rows.map((r) => [r.success, r.error_message, r.actor_type, r.actor_id]),
      [
        [false, 'INVALID_OTP', 'user', user.id],
        [true, null, 'user', user.id],
      ],
    )
  },
)

t.test(
  'renewMyRecoveryCodes: 200 a new set for a TOTP code; the former set no longer logs in, the new one does; one OTP_RECOVERY_CODES_RENEWED row',
  async (t) => {
    const tenant = await createTenant(app)
    const { user, cred, key, recoveryCodes: old } = await enrolledMember(tenant)
    const res = await renewCodes(cred, nextCode(key))
    t.equal(res.status, 200)
    const fresh = res.data.recoveryCodes as string[]
    t.equal(fresh.length, 10)
    t.equal(new Set(fresh).size, 10)
    for (const c of fresh) t.match(c, RECOVERY_SHAPE)
    t.notOk(
      fresh.some((c) => old.includes(c)),
      'a new set',
    )
    t.equal((await recoveryRowsOf(user)).length, 10, 'only the new set is stored')

    const stale = await loginAs(app, user, { otp: old[0] })
    t.equal(stale.status, 401, 'a code of the former set')
    t.equal(stale.code, 'INVALID_OTP')
    t.equal((await loginAs(app, user, { otp: fresh[0] })).status, 200, 'a code of the new set')
    t.equal((await getOtp(cred)).data.recoveryCodesLeft, 9)

    const rows = await rowsOf(user, 'OTP_RECOVERY_CODES_RENEWED')
    t.same(
      rows.map((r) => [r.success, r.actor_type, r.actor_id]),
      [[true, 'user', user.id]],
    )
  },
)

t.test(
  'renewMyRecoveryCodes: 200 for a recovery code, read case-insensitively without dashes; that code is spent',
  async (t) => {
    const tenant = await createTenant(app)
    const { user, cred, recoveryCodes } = await enrolledMember(tenant)
    const used = recoveryCodes[5] as string
    const typed = used.toUpperCase().replace(/-/g, ' ')
    const res = await renewCodes(cred, typed)
    t.equal(res.status, 200)
    t.equal(res.data.recoveryCodes.length, 10)
    const again = await renewCodes(cred, used)
    t.equal(again.status, 401, 'the same recovery code again')
    t.equal(again.code, 'INVALID_OTP')
    t.equal((await recoveryRowsOf(user)).filter((r) => r.used_at === null).length, 10, 'the new set is whole')
  },
)

t.test(
  'disableMyOtp: 200 otpEnabled false for a TOTP code; secret and recovery codes gone; the next login needs no code; one OTP_DISABLED row by the user',
  async (t) => {
    const tenant = await createTenant(app)
    const { user, cred, key } = await enrolledMember(tenant)
    t.equal((await loginAs(app, user)).code, 'OTP_REQUIRED', 'enrolled: a login needs the code')
    const res = await disableOtp(cred, nextCode(key))
    t.equal(res.status, 200)
    t.same(res.data, { otpEnabled: false })
    t.equal(await otpEnabledInDb(user), false)
    t.equal(await otpRowOf(user), undefined, 'no secret')
    t.equal((await recoveryRowsOf(user)).length, 0, 'no recovery codes')
    t.same((await getOtp(cred)).data, NOT_ENROLLED)
    const login = await loginAs(app, user)
    t.equal(login.status, 200, 'the password alone logs in again')
    const rows = await rowsOf(user, 'OTP_DISABLED')
    t.same(
      rows.map((r) => [r.success, r.actor_type, r.actor_id]),
      [[true, 'user', user.id]],
    )
    t.equal((await setupOtp(cred)).status, 200, 'a new enrollment may start')
  },
)

t.test('disableMyOtp: 200 for a recovery code', async (t) => {
  const tenant = await createTenant(app)
  const { user, cred, recoveryCodes } = await enrolledMember(tenant)
  const res = await disableOtp(cred, recoveryCodes[9] as string)
  t.equal(res.status, 200)
  t.same(res.data, { otpEnabled: false })
  t.equal((await loginAs(app, user)).status, 200)
})

t.test(
  'updateUser: otpEnabled false by an administrator is the lost-device reset: secret and recovery codes removed, an OTP_DISABLED row naming the admin, the next login needs no code',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const { user, cred } = await enrolledMember(tenant)
    const res = await patchUser(admin.cred, user.id, { otpEnabled: false })
    t.equal(res.status, 200)
    t.equal(res.data.otpEnabled, false)
    t.equal(await otpRowOf(user), undefined, 'the user_otp row is gone')
    t.equal((await recoveryRowsOf(user)).length, 0, 'the recovery codes are gone')
    t.same((await getOtp(cred)).data, NOT_ENROLLED)
    const rows = await rowsOf(user, 'OTP_DISABLED')
    t.same(
      rows.map((r) => [r.success, r.actor_type, r.actor_id]),
      [[true, 'user', admin.id]],
      'the actor is the administrator, the user the one reset',
    )
    t.equal((await loginAs(app, user)).status, 200, 'the password alone logs in')
  },
)

t.test(
  'updateUser: otpEnabled false on a user of a tenant that requires a second factor: the next login enrolls anew',
  async (t) => {
    const tenant = await createTenant(app, { mfa: { required: true } })
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const { user } = await enrolledMember(tenant)
    t.equal((await patchUser(admin.cred, user.id, { otpEnabled: false })).status, 200)
    t.equal(await otpRowOf(user), undefined, 'the lost authenticator is gone')
    const res = await loginAs(app, user)
    t.equal(res.status, 401)
    t.equal(res.code, 'OTP_ENROLLMENT_REQUIRED', 'the tenant still requires one: enroll at login')
  },
)

t.test(
  'updateUser: otpEnabled true on a user who never enrolled: the next login answers 401 OTP_ENROLLMENT_REQUIRED with an mfaToken',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await patchUser(admin.cred, user.id, { otpEnabled: true })
    t.equal(res.status, 200)
    t.equal(res.data.otpEnabled, true)
    t.same(
      (await getOtp(cred)).data,
      { ...NOT_ENROLLED, otpEnabled: true },
      'required of the user, not enrolled',
    )

    const login = await loginAs(app, user)
    t.equal(login.status, 401)
    t.equal(login.code, 'OTP_ENROLLMENT_REQUIRED')
    t.match(login.body.details, { mfaToken: /^[A-Za-z0-9_-]+$/, expiresIn: 300 })
    t.same(Object.keys(login.body.details ?? {}).sort(), ['expiresIn', 'mfaToken'])
    t.notOk(login.body.data, 'no token is issued')

    // The user may also enroll through /me/otp with a token it still holds; then a login asks for the code.
    const key = await startSetup(cred)
    t.equal((await confirmOtp(cred, codeNow(key))).status, 200)
    t.equal((await loginAs(app, user)).code, 'OTP_REQUIRED')
    t.equal((await loginAs(app, user, { otp: nextCode(key) })).status, 200)
  },
)
