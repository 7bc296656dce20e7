import t from 'tap'
import type { ParsedMail } from 'mailparser'
import { buildTestApp } from '../helpers/app.js'
import { call, login, unchecked, type As } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  keyCred,
  PASSWORD,
  userWithToken,
  type TenantFx,
} from '../helpers/fixtures.js'
import { appWithMail, tokenFrom } from './smtp.js'

// POST /me/email (changeMyEmail) and the `change` token's use by POST /email/verify (contract section 26):
// a link to the new address, nothing changed until it is used, then the change and a notice to the old
// address without a link. Every declared status of changeMyEmail but 413/415/429/500 (shared plumbing).

t.test('changeMyEmail: POST /me/email', async (t) => {
  const { smtp, app, mailer } = await appWithMail(t)
  const db = (tenantId: string) => app.ctx.dbs.forTenant(tenantId)
  const userRow = (tenantId: string, userId: string) =>
    db(tenantId)
      .selectFrom('users')
      .select(['email', 'email_verified'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow()
  const verify = (tenantCode: string, token: string) =>
    call(app, 'verifyEmail', {}, { body: { tenantCode, token } })
  const recipients = (m: ParsedMail | undefined) =>
    (Array.isArray(m?.to) ? m.to : m?.to ? [m.to] : []).flatMap((a) => a.value.map((v) => v.address))
  /** The messages that arrive while `act` runs (the outbox drained before and after). */
  const mailsOf = async (act: () => Promise<unknown>) => {
    await mailer.idle()
    const before = smtp.messages.length
    await act()
    await mailer.idle()
    return smtp.messages.slice(before)
  }
  const changeToken = (cred: As, email: string) =>
    tokenFrom(smtp, mailer, () => call(app, 'changeMyEmail', cred, { body: { email } }))
  /** Neither the audit rows of the change nor their metadata name the address. */
  const rowsName = async (tenant: TenantFx, address: string) => {
    const rows = [
      ...(await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')),
      ...(await auditRows(app, tenant.id, 'EMAIL_CHANGED')),
    ]
    return JSON.stringify(rows).toLowerCase().includes(address.toLowerCase())
  }

  t.test('202: a link to the new address; nothing changes until it is used', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const mails = await mailsOf(async () => {
      const res = await call(app, 'changeMyEmail', me.cred, { body: { email: 'New.Me@Example.test' } })
      t.equal(res.status, 202)
      t.same(res.data, { accepted: true })
    })
    t.equal(mails.length, 1)
    t.same(recipients(mails[0]), ['new.me@example.test'], 'to the new address, normalized')
    t.match(String(mails[0]?.text), /\/console\/verify-email\?tenant=.+&token=/, 'the verification page')
    t.match(String(mails[0]?.subject), /Confirm your new email address/)
    t.same(await userRow(tenant.id, me.id), { email: me.email, email_verified: false }, 'unchanged')
    const tokens = await db(tenant.id)
      .selectFrom('email_tokens')
      .select(['purpose', 'email'])
      .where('user_id', '=', me.id)
      .execute()
    t.same(tokens, [{ purpose: 'change', email: 'new.me@example.test' }])
    t.equal((await login(app, tenant.code, 'new.me@example.test')).status, 401, 'no login by it yet')
    const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')
    t.same(
      rows.map((r) => [r.user_id, r.success, r.actor_id]),
      [[me.id, true, me.id]],
    )
    t.notOk(await rowsName(tenant, 'new.me@example.test'), 'the audit row never names the address')
  })

  t.test(
    'verifyEmail: a change token sets the new address, verified; the old address gets a notice without a link',
    async (t) => {
      const tenant = await createTenant(app, { email: { locale: 'pt-BR' } })
      const me = await userWithToken(app, tenant)
      const resetToken = await tokenFrom(smtp, mailer, () =>
        call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: me.email } }),
      )
      const token = await changeToken(me.cred, 'moved@example.test')
      let res: Awaited<ReturnType<typeof verify>> | undefined
      const mails = await mailsOf(async () => {
        res = await verify(tenant.code, token)
      })
      t.equal(res?.status, 200)
      t.same(res?.data, { emailVerified: true })
      t.same(await userRow(tenant.id, me.id), { email: 'moved@example.test', email_verified: true })
      t.equal(mails.length, 1, 'one notice')
      t.same(recipients(mails[0]), [me.email], 'to the old address')
      t.match(String(mails[0]?.subject), /foi alterado/, 'in the tenant’s locale')
      t.notMatch(String(mails[0]?.text), /https?:|token=/, 'no link, no token in the text')
      t.notMatch(String(mails[0]?.html), /href=|https?:/, 'no link in the HTML')
      const changed = await auditRows(app, tenant.id, 'EMAIL_CHANGED')
      t.same(
        changed.map((r) => [r.user_id, r.success]),
        [[me.id, true]],
      )
      t.equal((await auditRows(app, tenant.id, 'EMAIL_VERIFIED')).length, 0, 'an EMAIL_CHANGED row instead')
      t.notOk(await rowsName(tenant, 'moved@example.test'))
      t.equal((await login(app, tenant.code, 'moved@example.test')).status, 200, 'signs in by the new one')
      t.equal((await login(app, tenant.code, me.email)).status, 401, 'not by the old one')
      t.equal((await verify(tenant.code, token)).code, 'INVALID_EMAIL_TOKEN', 'single use')
      const reset = await call(
        app,
        'resetPassword',
        {},
        {
          body: { tenantCode: tenant.code, token: resetToken, newPassword: 'A-brand-new-passphrase-7' },
        },
      )
      t.equal(reset.code, 'INVALID_EMAIL_TOKEN', 'the change voided the earlier reset link')
    },
  )

  t.test('409 USER_ALREADY_EXISTS: an address another user of the tenant has', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const other = await createUser(app, tenant)
    const mails = await mailsOf(async () => {
      const res = await call(app, 'changeMyEmail', me.cred, { body: { email: other.email.toUpperCase() } })
      t.equal(res.status, 409)
      t.equal(res.code, 'USER_ALREADY_EXISTS')
    })
    t.equal(mails.length, 0, 'no mail')
    const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')
    t.same(
      rows.map((r) => [r.user_id, r.success, r.error_message]),
      [[me.id, false, 'USER_ALREADY_EXISTS']],
    )
    t.notOk(await rowsName(tenant, other.email))
    const elsewhere = await createTenant(app)
    const there = await userWithToken(app, elsewhere)
    const ok = await call(app, 'changeMyEmail', there.cred, { body: { email: other.email } })
    t.equal(ok.status, 202, 'another tenant’s users do not count')
  })

  t.test(
    'verifyEmail: 409 USER_ALREADY_EXISTS when the address was taken since; nothing changes, the token is used',
    async (t) => {
      const tenant = await createTenant(app)
      const me = await userWithToken(app, tenant)
      const token = await changeToken(me.cred, 'contested@example.test')
      await createUser(app, tenant, { email: 'contested@example.test' })
      const mails = await mailsOf(async () => {
        const res = await verify(tenant.code, token)
        t.equal(res.status, 409)
        t.equal(res.code, 'USER_ALREADY_EXISTS')
      })
      t.equal(mails.length, 0, 'no notice')
      t.same(await userRow(tenant.id, me.id), { email: me.email, email_verified: false })
      t.equal((await verify(tenant.code, token)).code, 'INVALID_EMAIL_TOKEN', 'the token is used')
      const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGED')
      t.same(
        rows.map((r) => [r.user_id, r.success, r.error_message]),
        [[me.id, false, 'USER_ALREADY_EXISTS']],
        'a used token names nobody, so its second use writes no row',
      )
      t.equal((await login(app, tenant.code, me.email)).status, 200, 'the old address still signs in')
    },
  )

  t.test('verifyEmail: a change token dies when the password changes before it is used', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const token = await changeToken(me.cred, 'later@example.test')
    const changed = await call(app, 'changeMyPassword', me.cred, {
      body: { currentPassword: PASSWORD, newPassword: 'Another-passphrase-42' },
    })
    t.equal(changed.status, 200)
    t.equal((await verify(tenant.code, token)).code, 'INVALID_EMAIL_TOKEN')
    t.same(await userRow(tenant.id, me.id), { email: me.email, email_verified: false })
  })

  t.test(
    '400 VALIDATION_ERROR: the same address, not an address, a tenant without email sign-in',
    async (t) => {
      const tenant = await createTenant(app)
      const me = await userWithToken(app, tenant)
      const same = await call(app, 'changeMyEmail', me.cred, { body: { email: me.email.toUpperCase() } })
      t.equal(same.status, 400)
      t.equal(same.code, 'VALIDATION_ERROR')
      const bad = await call(app, 'changeMyEmail', me.cred, { body: { email: 'not an address' } })
      t.equal(bad.status, 400)
      t.equal(bad.code, 'VALIDATION_ERROR')
      const extra = await call(app, 'changeMyEmail', me.cred, {
        body: unchecked({ email: 'a@b.test', x: 1 }),
      })
      t.equal(extra.status, 400)
      const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')
      t.same(
        rows.map((r) => [r.success, r.error_message]),
        [[false, 'VALIDATION_ERROR']],
        'one row for the call that reached the service',
      )
      const byName = await createTenant(app, { loginIdentifiers: ['username'] })
      const named = await userWithToken(app, byName, { username: 'named-one' })
      const off = await call(app, 'changeMyEmail', named.cred, { body: { email: 'named@example.test' } })
      t.equal(off.status, 400)
      t.equal(off.code, 'VALIDATION_ERROR')
    },
  )

  t.test('401: a stale sign-in, a Client Key, no credential', async (t) => {
    const tenant = await createTenant(app)
    const stale = await userWithToken(app, tenant, { authTime: Math.floor(Date.now() / 1000) - 601 })
    const old = await call(app, 'changeMyEmail', stale.cred, { body: { email: 'x1@example.test' } })
    t.equal(old.status, 401)
    t.equal(old.code, 'REAUTHENTICATION_REQUIRED')
    const key = await keyCred(app, tenant, ['users:update', 'users:read'])
    const byKey = await call(app, 'changeMyEmail', key, { body: { email: 'x2@example.test' } })
    t.equal(byKey.status, 401)
    t.equal(byKey.code, 'UNAUTHORIZED')
    t.equal((await call(app, 'changeMyEmail', {}, { body: { email: 'x3@example.test' } })).status, 401)
  })

  t.test('404 USER_NOT_FOUND: the user deleted after the gate let its token through', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    // Why through the session lookup: deleting the user drops its sessions, so the recent-sign-in check
    // would refuse first; deleting it right after that check is the race a real deletion can win.
    const ctx = app.ctx as { liveSession: typeof app.ctx.liveSession }
    const original = ctx.liveSession
    ctx.liveSession = async (...args) => {
      const loginAt = await original(...args)
      await db(tenant.id).deleteFrom('users').where('id', '=', me.id).execute()
      return loginAt
    }
    try {
      const res = await call(app, 'changeMyEmail', me.cred, { body: { email: 'gone@example.test' } })
      t.equal(res.status, 404)
      t.equal(res.code, 'USER_NOT_FOUND')
    } finally {
      ctx.liveSession = original
    }
    const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [[false, 'USER_NOT_FOUND']],
    )
  })

  t.test('at most 3 an hour: past that, the same 202 and no mail', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const mails = await mailsOf(async () => {
      for (let i = 0; i < 4; i++) {
        const res = await call(app, 'changeMyEmail', me.cred, { body: { email: `try${i}@example.test` } })
        t.equal(res.status, 202)
      }
    })
    t.equal(mails.length, 3)
    const rows = await auditRows(app, tenant.id, 'EMAIL_CHANGE_REQUESTED')
    t.same(
      rows.map((r) => r.error_message),
      [null, null, null, 'hourly cap'],
    )
    const used = await db(tenant.id)
      .selectFrom('email_tokens')
      .select(['email', 'used_at'])
      .where('user_id', '=', me.id)
      .orderBy('created_at')
      .execute()
    t.same(
      used.map((r) => r.used_at === null),
      [false, false, true],
      'a new request voids the earlier links',
    )
  })
})

t.test('changeMyEmail: 503 MAIL_NOT_CONFIGURED without SMTP_URL', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const me = await userWithToken(app, tenant)
  const res = await call(app, 'changeMyEmail', me.cred, { body: { email: 'nomail@example.test' } })
  t.equal(res.status, 503)
  t.equal(res.code, 'MAIL_NOT_CONFIGURED')
})
