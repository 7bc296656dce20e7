import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, loginAs, type As, type BodyOf } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  tokenFor,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import { base32Decode, secretOfUri, totpAt } from '../helpers/totp.js'
import { createManualClock } from '../../src/lib/clock.js'

// The second factor managed by its user (getMyOtp, setupMyOtp, confirmMyOtp, renewMyRecoveryCodes,
// disableMyOtp: openapi/paths/otp.yaml) and by administrators (updateUser's otpEnabled): contract section
// 16. Logins that ask for the factor are test/otp/login-otp.test.ts. Codes come only from the otpauth URI
// the API returned, through test/helpers/totp.ts, as an authenticator app computes them. A step once
// accepted is never accepted again for a user, so the clock moves 30 s before every new TOTP code.

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })

const STEP_MS = 30_000
const PENDING_MS = 10 * 60 * 1000
const RECOVERY_SHAPE = /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/

const getOtp = (as: As) => call(app, 'getMyOtp', as)
const setupOtp = (as: As, body?: BodyOf<'setupMyOtp'>) => call(app, 'setupMyOtp', as, { body })
const confirmOtp = (as: As, code: string) => call(app, 'confirmMyOtp', as, { body: { code } })
const renewCodes = (as: As, code: string) => call(app, 'renewMyRecoveryCodes', as, { body: { code } })
const disableOtp = (as: As, code: string) => call(app, 'disableMyOtp', as, { body: { code } })
const patchUser = (as: As, userId: string, body: BodyOf<'updateUser'>) =>
  call(app, 'updateUser', as, { params: { userId }, body })

/** The authenticator's code now. */
const codeNow = (key: Buffer, drift = 0) => totpAt(key, clock.now(), drift)

/** Moves the clock to the next step and gives the authenticator's code there: never a used step. */
function nextCode(key: Buffer): string {
  clock.advance(STEP_MS)
  return codeNow(key)
}

/** Six digits that are no code of the accepted window now. */
function wrongCode(key: Buffer): string {
  const window = new Set([-1, 0, 1].map((d) => codeNow(key, d)))
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0')
    if (!window.has(code)) return code
  }
}

/** Runs the setup and returns the authenticator's key, read from the returned otpauth URI. */
async function startSetup(cred: As): Promise<Buffer> {
  const res = await setupOtp(cred)
  if (res.status !== 200) throw new Error(`setup failed: ${res.raw}`)
  return secretOfUri(res.data.otpauthUri)
}

/** A user who enrolled through /me/otp (setup and confirm), with its key and recovery codes. */
async function enrolledMember(tenant: TenantFx, opts: Parameters<typeof createUser>[2] = {}) {
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'], ...opts })
  const key = await startSetup(cred)
  const res = await confirmOtp(cred, codeNow(key))
  if (res.status !== 200) throw new Error(`confirm failed: ${res.raw}`)
  return { user, cred, key, recoveryCodes: res.data.recoveryCodes as string[] }
}

const tdb = (user: UserFx) => app.ctx.dbs.forTenant(user.tenant.id)

const otpRowOf = (user: UserFx) =>
  tdb(user)
    .selectFrom('user_otp')
    .selectAll()
    .where('tenant_id', '=', user.tenant.id)
    .where('user_id', '=', user.id)
    .executeTakeFirst()

const recoveryRowsOf = (user: UserFx) =>
  tdb(user)
    .selectFrom('otp_recovery_codes')
    .selectAll()
    .where('tenant_id', '=', user.tenant.id)
    .where('user_id', '=', user.id)
    .execute()

const otpEnabledInDb = async (user: UserFx) =>
  (
    await tdb(user)
      .selectFrom('users')
      .select('otp_enabled')
      .where('tenant_id', '=', user.tenant.id)
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow()
  ).otp_enabled

const deleteUserRow = (user: UserFx) =>
  tdb(user).deleteFrom('users').where('tenant_id', '=', user.tenant.id).where('id', '=', user.id).execute()

const rowsOf = async (user: UserFx, action: Parameters<typeof auditRows>[2]) =>
  (await auditRows(app, user.tenant.id, action)).filter((r) => r.user_id === user.id)

const NOT_ENROLLED = {
  otpEnabled: false,
  enrolled: false,
  pendingSetup: false,
  recoveryCodesLeft: 0,
  requiredByTenant: false,
}

// ---------------------------------------------------------------------------------------------------
// getMyOtp
// ---------------------------------------------------------------------------------------------------

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

t.test("getMyOtp: 404 USER_NOT_FOUND for a deleted user's still-valid access token", async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  await deleteUserRow(user)
  const res = await getOtp(cred)
  t.equal(res.status, 404)
  t.equal(res.code, 'USER_NOT_FOUND')
})

// ---------------------------------------------------------------------------------------------------
// setupMyOtp
// ---------------------------------------------------------------------------------------------------

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

t.test("setupMyOtp: 404 USER_NOT_FOUND for a deleted user's still-valid access token", async (t) => {
  const tenant = await createTenant(app)
  const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  await deleteUserRow(user)
  const res = await setupOtp(cred)
  t.equal(res.status, 404)
  t.equal(res.code, 'USER_NOT_FOUND')
})

// ---------------------------------------------------------------------------------------------------
// confirmMyOtp
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// renewMyRecoveryCodes
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// disableMyOtp
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// updateUser (administrators)
// ---------------------------------------------------------------------------------------------------

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
