import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, login, refresh, unchecked } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  deactivateTenant,
  freshIp,
  platformKey,
  userRow,
  userWithToken,
} from '../helpers/fixtures.js'
import { appWithMail, tokenOf } from './smtp.js'

const FROM = 'Tessera <no-reply@example.test>'

t.test('forgotPassword and resetPassword over a real SMTP server', async (t) => {
  const { smtp, app, mailer } = await appWithMail(t, {}, FROM)
  if (!mailer) throw new Error('mail should be on')
  const forgot = (tenantCode: string, identifier: string, ip?: string) =>
    call(app, 'forgotPassword', { ip }, { body: { tenantCode, identifier } })

  t.test('forgotPassword: 202, one mail with a working link, then resetPassword: 200', async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const before = smtp.messages.length
    const res = await forgot(tenant.code, user.email)
    t.equal(res.status, 202)
    t.same(res.data, { accepted: true })
    await mailer.idle()
    t.equal(await smtp.waitForCount(before + 1), before + 1, 'one mail arrived')
    const mail = smtp.messages[before]!
    t.equal(mail.headers.get('auto-submitted'), 'auto-generated')
    t.match(String(mail.subject), /Reset your/)
    t.match(mail.text, new RegExp(`tenant=${tenant.code}&token=`))
    t.match(String(mail.html), /<a href="http:\/\/127\.0\.0\.1:3000\/console\/reset-password\?tenant=/)
    t.notMatch(String(mail.html), /<img/i, 'no remote image')
    const token = tokenOf(mail)
    t.ok(token.length >= 43, '256 bits')
    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET_REQUESTED')
    t.equal(rows.length, 1)
    t.equal(rows[0]?.success, true)

    const session = await login(app, tenant.code, user.email)
    t.equal(session.status, 200)
    const reset = await call(
      app,
      'resetPassword',
      {},
      { body: { tenantCode: tenant.code, token, newPassword: 'A-brand-new-passphrase-7' } },
    )
    t.equal(reset.status, 200)
    t.same(reset.data, { changed: true, sessionsRevoked: 1 })
    t.equal((await login(app, tenant.code, user.email, 'A-brand-new-passphrase-7')).status, 200)
    const refreshed = await refresh(app, session.data.refreshToken)
    t.equal(refreshed.code, 'INVALID_REFRESH_TOKEN', 'every session was revoked')
    const u = await userRow(app, tenant.id, user.id)
    t.equal(u.email_verified, true, 'the mailbox is proven')
    const audit = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.same(
      audit.map((r) => [r.success, r.metadata]),
      [[true, { sessionsRevoked: 1, method: 'email' }]],
    )

    const again = await call(
      app,
      'resetPassword',
      {},
      { body: { tenantCode: tenant.code, token, newPassword: 'Yet-another-passphrase-8' } },
    )
    t.equal(again.status, 400)
    t.equal(again.code, 'INVALID_EMAIL_TOKEN', 'single use')
  })

  t.test('forgotPassword: 404 TENANT_NOT_FOUND for an unknown or INACTIVE tenant', async (t) => {
    t.equal((await forgot('no-such-tenant', 'a@b.test')).code, 'TENANT_NOT_FOUND')
    const tenant = await createTenant(app)
    await deactivateTenant(app, tenant.id)
    const res = await forgot(tenant.code, 'a@b.test')
    t.equal(res.status, 404)
    t.equal(res.code, 'TENANT_NOT_FOUND')
  })

  t.test('forgotPassword: 400 VALIDATION_ERROR for a body of the wrong shape', async (t) => {
    const res = await call(app, 'forgotPassword', {}, { body: unchecked({ tenantCode: 'x' }) })
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
  })

  t.test('forgotPassword: 429 RATE_LIMIT_EXCEEDED past 5 per minute from one address', async (t) => {
    const tenant = await createTenant(app)
    const ip = freshIp()
    for (let i = 0; i < 5; i++) t.equal((await forgot(tenant.code, 'nobody@example.test', ip)).status, 202)
    const res = await forgot(tenant.code, 'nobody@example.test', ip)
    t.equal(res.status, 429)
    t.equal(res.code, 'RATE_LIMIT_EXCEEDED')
    await mailer.idle()
  })

  t.test(
    'forgotPassword: unknown, no-email and inactive users get the same bytes, the same work, and no mail',
    async (t) => {
      const tenant = await createTenant(app, { loginIdentifiers: ['email', 'username'] })
      const known = await createUser(app, tenant)
      const inactive = await createUser(app, tenant, { status: 'INACTIVE' })
      const noEmail = await createUser(app, tenant, { username: 'no_mail_user' })
      await app.ctx.dbs
        .forTenant(tenant.id)
        .updateTable('users')
        .set({ email: null })
        .where('id', '=', noEmail.id)
        .execute()
      // Count what the request itself does: the queries on the tenant's database and the password hashes.
      let queries = 0
      const forTenant = app.ctx.dbs.forTenant.bind(app.ctx.dbs)
      app.ctx.dbs.forTenant = (id: string) => {
        queries++
        return forTenant(id)
      }
      t.teardown(() => {
        app.ctx.dbs.forTenant = forTenant
      })
      await mailer.idle()
      const before = smtp.messages.length
      mailer.hold()
      const answers = new Set<string>()
      const work = new Set<number>()
      for (const identifier of ['nobody@example.test', inactive.email, 'no_mail_user', known.email]) {
        queries = 0
        const res = await call(app, 'forgotPassword', null, { body: { tenantCode: tenant.code, identifier } })
        t.equal(res.status, 202, identifier)
        answers.add(res.raw)
        work.add(queries)
      }
      t.equal(answers.size, 1, 'the same bytes whoever the identifier names')
      t.same([...work], [0], 'the request itself touches no tenant data: the lookup runs after the answer')
      mailer.release()
      await mailer.idle()
      t.equal(await smtp.waitForCount(before + 1, 1000), before + 1, 'only the known user got a mail')
      t.equal(
        smtp.messages[before]?.to && JSON.stringify(smtp.messages[before]?.to).includes(known.email),
        true,
      )
      const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET_REQUESTED')
      t.same(
        rows.map((r) => r.error_message).sort(),
        [null, 'no email', 'not active', 'unknown identifier'].sort(),
      )
    },
  )

  t.test(
    'forgotPassword: at most 3 mails an hour reach one user, and a new request voids the earlier link',
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant)
      await mailer.idle()
      const before = smtp.messages.length
      // One after another, so the mails arrive in the order of their tokens (the race is the next test's).
      for (let i = 0; i < 4; i++) {
        t.equal((await forgot(tenant.code, user.email)).status, 202)
        await mailer.idle()
      }
      t.equal(await smtp.waitForCount(before + 3, 1000), before + 3, 'three mails, not four')
      const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET_REQUESTED')
      t.same(
        rows.map((r) => r.error_message),
        [null, null, null, 'hourly cap'],
      )
      const mails = smtp.messages.slice(before)
      const first = tokenOf(mails[0]!)
      const last = tokenOf(mails[2]!)
      const body = (token: string) => ({
        tenantCode: tenant.code,
        token,
        newPassword: 'A-brand-new-passphrase-7',
      })
      t.equal((await call(app, 'resetPassword', {}, { body: body(first) })).code, 'INVALID_EMAIL_TOKEN')
      t.equal((await call(app, 'resetPassword', {}, { body: body(last) })).status, 200)
    },
  )
})

t.test('forgotPassword: 10 concurrent requests for one user queue at most 3 mails', async (t) => {
  const { smtp, app, mailer } = await appWithMail(t, {}, FROM)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: user.email } }),
    ),
  )
  t.same(new Set(answers.map((a) => a.status)), new Set([202]))
  await mailer.idle()
  await smtp.waitForCount(3, 1000)
  t.equal(smtp.messages.length, 3, 'the cap holds under a race (the user row is locked while counting)')
})

t.test('forgotPassword: 503 MAIL_NOT_CONFIGURED on every operation without SMTP_URL', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const res = await call(
    app,
    'forgotPassword',
    {},
    { body: { tenantCode: tenant.code, identifier: 'a@b.test' } },
  )
  t.equal(res.status, 503)
  t.equal(res.code, 'MAIL_NOT_CONFIGURED')
  const token = 'x'.repeat(43)
  const reset = await call(
    app,
    'resetPassword',
    {},
    { body: { tenantCode: tenant.code, token, newPassword: 'Whatever-pass-123' } },
  )
  t.equal(reset.code, 'MAIL_NOT_CONFIGURED', 'resetPassword: 503 MAIL_NOT_CONFIGURED')
  const verify = await call(app, 'verifyEmail', {}, { body: { tenantCode: tenant.code, token } })
  t.equal(verify.code, 'MAIL_NOT_CONFIGURED', 'verifyEmail: 503 MAIL_NOT_CONFIGURED')
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const user = await createUser(app, tenant)
  const mine = await call(app, 'sendMyEmailVerification', admin.cred)
  t.equal(mine.code, 'MAIL_NOT_CONFIGURED', 'sendMyEmailVerification: 503 MAIL_NOT_CONFIGURED')
  const theirs = await call(app, 'sendUserEmailVerification', admin.cred, { params: { userId: user.id } })
  t.equal(theirs.code, 'MAIL_NOT_CONFIGURED', 'sendUserEmailVerification: 503 MAIL_NOT_CONFIGURED')
  // Mail off: registration sends nothing, and `verification: required` holds nobody back.
  await call(app, 'updateTenantConfig', platformKey, {
    params: { id: tenant.id },
    body: { email: { verification: 'required' } },
  })
  t.equal((await login(app, tenant.code, user.email)).status, 200, 'login: unaffected with mail off')
})
