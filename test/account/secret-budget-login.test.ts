import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { auditRows, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { assertSpent, harness, STEP_MS, WINDOW_MS } from '../helpers/secret-budget.js'
import { createManualClock } from '../../src/lib/clock.js'

// The per-user secret budget (contract section 22, "Every check of a user's secret is counted, always"):
// 10 failed checks of a second-factor code or of the current password in 15 minutes, whatever
// auth_config.lockout says; past it every check of the user is 429 with Retry-After, from any address and
// with the right secret, until the window ends or an administrator unlocks the user.
// This file: the login paths (POST /login with otp, POST /login/otp), the window, and unlock.

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const h = harness(app, clock)
t.test(
  'verifyLoginOtp: wrong codes across fresh mfaTokens are counted per user; the 11th check is 429 with the right code',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await h.enrolled(tenant)
    for (let i = 1; i <= 10; i++) {
      const r = await h.verify(user, h.wrong(user))
      t.equal(r.code, 'INVALID_OTP', `wrong code ${i}, on a fresh mfaToken from a fresh address`)
    }
    const right = await h.verify(user, h.code(user))
    assertSpent(t, right, 'the right code past the budget')
    t.equal(right.headers['retry-after'], '900', 'the window ends 15 minutes after its first failure')
    const recovery = await h.verify(user, user.recoveryCodes[0] as string)
    assertSpent(t, recovery, 'a recovery code past the budget')

    const rows = await auditRows(app, tenant.id, 'LOGIN')
    t.ok(
      rows.some((r) => !r.success && r.error_message === 'RATE_LIMIT_EXCEEDED' && r.user_id === user.id),
      'the refusal wrote its LOGIN failure row',
    )
    const locked = await auditRows(app, tenant.id, 'ACCOUNT_LOCKED')
    t.equal(locked.length, 1, 'spending the budget wrote one ACCOUNT_LOCKED row')

    const other = await h.enrolled(tenant)
    t.equal((await h.verify(other, h.code(other))).status, 200, 'another user of the tenant is unaffected')

    clock.advance(WINDOW_MS - 60_000)
    assertSpent(t, await h.verify(user, h.code(user)), 'a minute before the window ends')
    clock.advance(60_000)
    t.equal((await h.verify(user, h.code(user))).status, 200, 'the window has passed: the right code logs in')
  },
)

t.test('login: a wrong otp at POST /login is counted; past the budget the right otp is 429', async (t) => {
  const tenant = await createTenant(app)
  const user = await h.enrolled(tenant)
  for (let i = 1; i <= 9; i++) t.equal((await h.login(user, h.wrong(user))).code, 'INVALID_OTP')
  const ok = await h.login(user, h.code(user))
  t.equal(ok.status, 200, 'a right code within the budget logs in, and is not counted')
  clock.advance(STEP_MS)
  t.equal((await h.login(user, h.wrong(user))).code, 'INVALID_OTP', 'the 10th failure: a success erased none')
  assertSpent(t, await h.login(user, h.code(user)), 'the right otp past the budget')
  t.equal((await h.verify(user, h.wrong(user))).status, 429, 'one budget for both ways of giving a code')
  const plain = await h.login(user)
  t.equal(plain.code, 'OTP_REQUIRED', 'the password step is not a check of the budget (the lockout has it)')
})

t.test('unlockUser: 200 clears the secret budget; the right code is taken again', async (t) => {
  const tenant = await createTenant(app)
  const user = await h.enrolled(tenant)
  for (let i = 0; i < 10; i++) await h.verify(user, h.wrong(user))
  assertSpent(t, await h.verify(user, h.code(user)), 'spent')
  const admin = await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] }))
  const r = await call(app, 'unlockUser', { token: admin }, { params: { userId: user.id } })
  t.equal(r.status, 200)
  t.equal((await h.verify(user, h.code(user))).status, 200, 'unlocked: the right code logs in')
})
