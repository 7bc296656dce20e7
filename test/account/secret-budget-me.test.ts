import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, loginTokens } from '../helpers/call.js'
import { auditRows, createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'
import { secretOfUri } from '../helpers/totp.js'
import { assertSpent, harness, WRONG_PASSWORD } from '../helpers/secret-budget.js'
import { createManualClock } from '../../src/lib/clock.js'

// The per-user secret budget (contract section 22, "Every check of a user's secret is counted, always"):
// 10 failed checks of a second-factor code or of the current password in 15 minutes, whatever
// auth_config.lockout says; past it every check of the user is 429 with Retry-After, from any address and
// with the right secret, until the window ends or an administrator unlocks the user.
// This file: the /me operations that check a secret, and the budget beside the lockout.

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const h = harness(app, clock)
t.test('disableMyOtp: guessed codes with a stolen access token are counted; the factor stays', async (t) => {
  const tenant = await createTenant(app)
  const user = await h.enrolled(tenant)
  const stolen = await h.sessionOf(user)
  for (let i = 1; i <= 10; i++) {
    const r = await call(app, 'disableMyOtp', stolen, { body: { code: h.wrong(user) } })
    t.equal(r.code, 'INVALID_OTP', `guess ${i}`)
  }
  const right = await call(app, 'disableMyOtp', stolen, { body: { code: h.code(user) } })
  assertSpent(t, right, 'the right code past the budget')
  const status = await call(app, 'getMyOtp', stolen)
  t.equal(status.data.enrolled, true, 'the factor was not removed')
  const rows = await auditRows(app, tenant.id, 'OTP_DISABLED')
  t.ok(
    rows.some((r) => !r.success && r.error_message === 'RATE_LIMIT_EXCEEDED'),
    'the refusal has its failure row',
  )
  assertSpent(
    t,
    await call(app, 'renewMyRecoveryCodes', stolen, { body: { code: h.code(user) } }),
    'renewMyRecoveryCodes: the same budget',
  )
  t.equal((await h.verify(user, h.code(user))).status, 429, 'and the login’s second step')
})

t.test('confirmMyOtp: wrong codes for a pending setup are counted; the 11th is 429', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const as = { token: (await loginTokens(app, user)).accessToken }
  const setup = await call(app, 'setupMyOtp', as)
  const pending = { key: secretOfUri(setup.data.otpauthUri), recoveryCodes: [], ...user }
  for (let i = 1; i <= 10; i++) {
    const r = await call(app, 'confirmMyOtp', as, { body: { code: h.wrong(pending) } })
    t.equal(r.code, 'INVALID_OTP', `wrong code ${i}`)
  }
  const right = await call(app, 'confirmMyOtp', as, { body: { code: h.code(pending) } })
  assertSpent(t, right, 'the right code past the budget')
  t.equal((await call(app, 'getMyOtp', as)).data.enrolled, false, 'not enrolled')
})

t.test(
  'changeMyPassword: a wrong currentPassword is counted; the 11th is 429 even with the right one',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const as = { token: await tokenFor(app, user) }
    const change = (currentPassword: string) =>
      call(app, 'changeMyPassword', as, { body: { currentPassword, newPassword: 'Brand-new-pass-42' } })
    for (let i = 1; i <= 10; i++)
      t.equal((await change(WRONG_PASSWORD)).code, 'INVALID_CREDENTIALS', `guess ${i}`)
    assertSpent(t, await change(PASSWORD), 'the right currentPassword past the budget')
    const login = await h.login(user)
    t.equal(login.status, 200, 'the password did not change, and the login budget is another one')
  },
)

t.test('changeMyPassword: a right currentPassword is not counted', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const as = { token: await tokenFor(app, user) }
  let current = PASSWORD
  for (let i = 0; i < 11; i++) {
    const next = `Brand-new-pass-${i}x`
    const r = await call(app, 'changeMyPassword', as, {
      body: {
        currentPassword: current,
        newPassword: next,
      },
    })
    t.equal(r.status, 200, `change ${i + 1}`)
    current = next
  }
})

t.test('the budget is on whatever auth_config.lockout says, and apart from it', async (t) => {
  const lockout = { enabled: true, threshold: 3, windowSeconds: 60, baseSeconds: 60, maxSeconds: 120 }
  const tenant = await createTenant(app, { lockout })
  const user = await createUser(app, tenant)
  for (let i = 0; i < 2; i++) {
    const r = await call(
      app,
      'login',
      {},
      { body: { tenantCode: tenant.code, identifier: user.email, password: WRONG_PASSWORD } },
    )
    t.equal(r.code, 'INVALID_CREDENTIALS')
  }
  const as = { token: await tokenFor(app, user) }
  const change = (currentPassword: string) =>
    call(app, 'changeMyPassword', as, { body: { currentPassword, newPassword: 'Brand-new-pass-42' } })
  for (let i = 1; i <= 10; i++)
    t.equal((await change(WRONG_PASSWORD)).code, 'INVALID_CREDENTIALS', `guess ${i}`)
  assertSpent(t, await change(PASSWORD), 'spent after its own 10 failures, not after the lockout’s 3')
  t.equal((await h.login(user)).status, 200, 'the password failures at /login were not added to it')
})
