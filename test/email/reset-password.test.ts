import t from 'tap'
import { call, login, unchecked } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  freshIp,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { appWithMail, tokenFrom } from './smtp.js'

const NEW_PASSWORD = 'A-brand-new-passphrase-7'

t.test('resetPassword: POST /password/reset', async (t) => {
  const clock = createManualClock()
  const { smtp, app, mailer } = await appWithMail(t, { clock })
  const resetToken = (tenant: TenantFx, user: UserFx) =>
    tokenFrom(smtp, mailer, () =>
      call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: user.email } }),
    )
  const reset = (tenantCode: string, token: string, newPassword = NEW_PASSWORD) =>
    call(app, 'resetPassword', {}, { body: { tenantCode, token, newPassword } })

  t.test('resetPassword: 400 PASSWORD_POLICY_VIOLATION, and the token stays usable', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const token = await resetToken(tenant, user)
    const weak = await reset(tenant.code, token, 'password')
    t.equal(weak.status, 400)
    t.equal(weak.code, 'PASSWORD_POLICY_VIOLATION')
    t.equal((await reset(tenant.code, token)).status, 200)
  })

  t.test(
    'resetPassword: 400 INVALID_EMAIL_TOKEN for an unknown token and another tenant’s token',
    async (t) => {
      const a = await createTenant(app)
      const b = await createTenant(app)
      const user = await createUser(app, a)
      const token = await resetToken(a, user)
      const other = await reset(b.code, token)
      t.equal(other.status, 400)
      t.equal(other.code, 'INVALID_EMAIL_TOKEN')
      t.equal((await reset(a.code, 'A'.repeat(43))).code, 'INVALID_EMAIL_TOKEN')
      t.equal((await reset(a.code, token)).status, 200, 'still good in its own tenant')
    },
  )

  t.test(
    'resetPassword: 400 INVALID_EMAIL_TOKEN once expired (manual clock) and for a user no longer ACTIVE',
    async (t) => {
      const tenant = await createTenant(app, { email: { passwordResetTtlSeconds: 300 } })
      const user = await createUser(app, tenant)
      const token = await resetToken(tenant, user)
      clock.advance(301_000)
      t.equal((await reset(tenant.code, token)).code, 'INVALID_EMAIL_TOKEN', 'expired')
      const other = await createUser(app, tenant)
      const token2 = await resetToken(tenant, other)
      await app.ctx.dbs
        .forTenant(tenant.id)
        .updateTable('users')
        .set({ status: 'SUSPENDED' })
        .where('id', '=', other.id)
        .execute()
      t.equal((await reset(tenant.code, token2)).code, 'INVALID_EMAIL_TOKEN', 'user not active')
      const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
      t.same(
        rows.map((r) => [r.user_id, r.success, r.error_message]),
        [[other.id, false, 'INVALID_EMAIL_TOKEN']],
      )
    },
  )

  t.test('resetPassword: of 10 concurrent resets with one token exactly one succeeds', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const token = await resetToken(tenant, user)
    const results = await Promise.all(Array.from({ length: 10 }, () => reset(tenant.code, token)))
    t.equal(results.filter((r) => r.status === 200).length, 1)
    t.equal(results.filter((r) => r.code === 'INVALID_EMAIL_TOKEN').length, 9)
  })

  t.test('resetPassword: clears account throttling of the user’s identifiers', async (t) => {
    const lockout = { enabled: true, threshold: 2, windowSeconds: 900, baseSeconds: 600, maxSeconds: 600 }
    const tenant = await createTenant(app, { lockout })
    const user = await createUser(app, tenant)
    for (let i = 0; i < 2; i++) await login(app, tenant.code, user.email, 'Wrong-password-1')
    t.equal((await login(app, tenant.code, user.email)).status, 429, 'locked')
    const token = await resetToken(tenant, user)
    t.equal((await reset(tenant.code, token)).status, 200)
    t.equal((await login(app, tenant.code, user.email, NEW_PASSWORD)).status, 200, 'the lock is gone')
  })

  t.test('resetPassword: 404 TENANT_NOT_FOUND and 400 VALIDATION_ERROR', async (t) => {
    const res = await reset('no-such-tenant', 'A'.repeat(43))
    t.equal(res.status, 404)
    t.equal(res.code, 'TENANT_NOT_FOUND')
    const bad = await call(app, 'resetPassword', {}, { body: unchecked({ tenantCode: 'x', token: 'short' }) })
    t.equal(bad.status, 400)
    t.equal(bad.code, 'VALIDATION_ERROR')
  })

  t.test('resetPassword: 429 RATE_LIMIT_EXCEEDED: counts against the login budget', async (t) => {
    const tenant = await createTenant(app)
    const ip = freshIp()
    for (let i = 0; i < 3; i++) await login(app, tenant.code, 'x@example.test', 'Wrong-password-1', ip)
    for (let i = 0; i < 2; i++) {
      const r = await call(
        app,
        'resetPassword',
        { ip },
        { body: { tenantCode: tenant.code, token: 'A'.repeat(43), newPassword: NEW_PASSWORD } },
      )
      t.equal(r.status, 400)
    }
    const res = await call(
      app,
      'resetPassword',
      { ip },
      { body: { tenantCode: tenant.code, token: 'A'.repeat(43), newPassword: NEW_PASSWORD } },
    )
    t.equal(res.status, 429)
    t.equal(res.code, 'RATE_LIMIT_EXCEEDED')
  })

  t.test(
    'forgotPassword: a message whose token expired before it could be sent is dropped, never sent late',
    async (t) => {
      const tenant = await createTenant(app, { email: { passwordResetTtlSeconds: 300 } })
      const user = await createUser(app, tenant)
      await mailer.idle()
      smtp.failNext(1)
      const before = smtp.messages.length
      await call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: user.email } })
      await mailer.idle()
      t.equal(mailer.counts.retry >= 1, true, 'the first try failed')
      clock.advance(600_000)
      mailer.nudge()
      await mailer.idle()
      t.equal(smtp.messages.length, before, 'nothing sent late')
      t.ok(mailer.counts.expired >= 1, 'counted as expired')
    },
  )
})
