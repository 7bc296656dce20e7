import t from 'tap'
import { call, login, type Res, unchecked } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  keyCred,
  PASSWORD,
  UNKNOWN_ID,
  userRow,
  userWithToken,
} from '../helpers/fixtures.js'
import { appWithMail, tokenFrom } from './smtp.js'

t.test('email verification over a real SMTP server', async (t) => {
  const { smtp, app, mailer } = await appWithMail(t, {}, 'Tessera <no-reply@example.test>')
  const db = (tenantId: string) => app.ctx.dbs.forTenant(tenantId)
  const verified = async (tenantId: string, userId: string) =>
    (await userRow(app, tenantId, userId)).email_verified
  const verify = (tenantCode: string, token: string) =>
    call(app, 'verifyEmail', {}, { body: { tenantCode, token } })

  t.test('sendMyEmailVerification: 202, a mail, then verifyEmail: 200 and emailVerified', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    let res: Res<'sendMyEmailVerification'> | undefined
    const token = await tokenFrom(smtp, mailer, async () => {
      res = await call(app, 'sendMyEmailVerification', me.cred)
    })
    t.equal(res?.status, 202)
    t.same(res?.data, { accepted: true })
    t.match(String(smtp.messages.at(-1)?.subject), /Confirm your email address/)
    const ok = await verify(tenant.code, token)
    t.equal(ok.status, 200)
    t.same(ok.data, { emailVerified: true })
    t.equal(await verified(tenant.id, me.id), true)
    t.equal((await verify(tenant.code, token)).code, 'INVALID_EMAIL_TOKEN', 'single use')
    t.equal((await auditRows(app, tenant.id, 'EMAIL_VERIFICATION_SENT')).length, 1)
    t.equal((await auditRows(app, tenant.id, 'EMAIL_VERIFIED')).filter((r) => r.success).length, 1)
    const again = await call(app, 'sendMyEmailVerification', me.cred)
    t.equal(again.status, 409)
    t.equal(again.code, 'EMAIL_ALREADY_VERIFIED')
  })

  t.test(
    'sendMyEmailVerification: 400 VALIDATION_ERROR without an email, 401 without a token, 404 for a deleted user',
    async (t) => {
      const tenant = await createTenant(app, { loginIdentifiers: ['email', 'username'] })
      const me = await userWithToken(app, tenant, { username: 'mailless' })
      await db(tenant.id).updateTable('users').set({ email: null }).where('id', '=', me.id).execute()
      const res = await call(app, 'sendMyEmailVerification', me.cred)
      t.equal(res.status, 400)
      t.equal(res.code, 'VALIDATION_ERROR')
      t.equal((await call(app, 'sendMyEmailVerification', {})).status, 401)
      await db(tenant.id).deleteFrom('users').where('id', '=', me.id).execute()
      const gone = await call(app, 'sendMyEmailVerification', me.cred)
      t.equal(gone.status, 404)
      t.equal(gone.code, 'USER_NOT_FOUND')
    },
  )

  t.test('sendMyEmailVerification: at most 3 an hour', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    await mailer.idle()
    const before = smtp.messages.length
    for (let i = 0; i < 4; i++) t.equal((await call(app, 'sendMyEmailVerification', me.cred)).status, 202)
    await mailer.idle()
    t.equal(await smtp.waitForCount(before + 3, 1000), before + 3)
    const rows = await auditRows(app, tenant.id, 'EMAIL_VERIFICATION_SENT')
    t.same(
      rows.map((r) => r.error_message),
      [null, null, null, 'hourly cap'],
    )
  })

  t.test(
    'verifyEmail: 400 INVALID_EMAIL_TOKEN once the address changed (PATCH clears emailVerified)',
    async (t) => {
      const tenant = await createTenant(app)
      const admin = await userWithToken(app, tenant, { roles: ['admin'] })
      const user = await createUser(app, tenant)
      const token = await tokenFrom(smtp, mailer, () =>
        call(app, 'sendUserEmailVerification', admin.cred, { params: { userId: user.id } }),
      )
      const patched = await call(app, 'updateUser', admin.cred, {
        params: { userId: user.id },
        body: {
          email: 'new@example.test',
        },
      })
      t.equal(patched.status, 200)
      t.equal(patched.data.emailVerified, false)
      const res = await verify(tenant.code, token)
      t.equal(res.status, 400)
      t.equal(res.code, 'INVALID_EMAIL_TOKEN')
      t.equal(await verified(tenant.id, user.id), false)
      // The same PATCH may set it, and a PATCH that keeps the address keeps it.
      const both = await call(app, 'updateUser', admin.cred, {
        params: { userId: user.id },
        body: {
          email: 'other@example.test',
          emailVerified: true,
        },
      })
      t.equal(both.data.emailVerified, true)
      const same = await call(app, 'updateUser', admin.cred, {
        params: { userId: user.id },
        body: {
          email: 'other@example.test',
        },
      })
      t.equal(same.data.emailVerified, true)
    },
  )

  t.test(
    'verifyEmail: 404 TENANT_NOT_FOUND, 400 VALIDATION_ERROR, another tenant’s token refused',
    async (t) => {
      t.equal((await verify('no-such-tenant', 'A'.repeat(43))).code, 'TENANT_NOT_FOUND')
      t.equal(
        (await call(app, 'verifyEmail', {}, { body: unchecked({ tenantCode: 'x' }) })).code,
        'VALIDATION_ERROR',
      )
      const a = await createTenant(app)
      const b = await createTenant(app)
      const me = await userWithToken(app, a)
      const token = await tokenFrom(smtp, mailer, () => call(app, 'sendMyEmailVerification', me.cred))
      t.equal((await verify(b.code, token)).code, 'INVALID_EMAIL_TOKEN')
      t.equal((await verify(a.code, token)).status, 200)
    },
  )

  t.test(
    'sendUserEmailVerification: 202 by key, 403 FORBIDDEN without users:update, 403 hierarchy, 404, 409',
    async (t) => {
      const tenant = await createTenant(app)
      const user = await createUser(app, tenant)
      const key = await keyCred(app, tenant, ['users:update', 'users:read'])
      const ok = await call(app, 'sendUserEmailVerification', key, { params: { userId: user.id } })
      t.equal(ok.status, 202)
      const reader = await keyCred(app, tenant, ['users:read'])
      const denied = await call(app, 'sendUserEmailVerification', reader, { params: { userId: user.id } })
      t.equal(denied.status, 403)
      t.equal(denied.code, 'FORBIDDEN')
      const admin = await createUser(app, tenant, { roles: ['admin'] })
      const res = await call(app, 'sendUserEmailVerification', key, { params: { userId: admin.id } })
      t.equal(res.status, 403)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      const missing = await call(app, 'sendUserEmailVerification', key, { params: { userId: UNKNOWN_ID } })
      t.equal(missing.code, 'USER_NOT_FOUND')
      await db(tenant.id)
        .updateTable('users')
        .set({ email_verified: true })
        .where('id', '=', user.id)
        .execute()
      const done = await call(app, 'sendUserEmailVerification', key, { params: { userId: user.id } })
      t.equal(done.status, 409)
      t.equal(done.code, 'EMAIL_ALREADY_VERIFIED')
      t.equal((await call(app, 'sendUserEmailVerification', {}, { params: { userId: user.id } })).status, 401)
      t.equal(
        (await call(app, 'sendUserEmailVerification', key, { params: { userId: 'not-a-uuid' } })).status,
        400,
      )
      await mailer.idle()
    },
  )

  t.test(
    'register: sends a verification mail when verification is not off; login with "required"',
    async (t) => {
      const tenant = await createTenant(app, { email: { verification: 'required' } })
      const key = await keyCred(app, tenant, ['users:create'])
      let created: Res<'register'> | undefined
      const token = await tokenFrom(smtp, mailer, async () => {
        created = await call(app, 'register', key, {
          body: { email: 'newbie@example.test', password: PASSWORD },
        })
      })
      t.equal(created?.status, 201)
      const refused = await login(app, tenant.code, 'newbie@example.test')
      t.equal(refused.status, 403, 'login: 403 EMAIL_NOT_VERIFIED after the right password')
      t.equal(refused.code, 'EMAIL_NOT_VERIFIED')
      const wrong = await login(app, tenant.code, 'newbie@example.test', 'Wrong-password-1')
      t.equal(wrong.code, 'INVALID_CREDENTIALS', 'a wrong password still says so first')
      const sessions = await db(tenant.id)
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', created!.data.id)
        .execute()
      t.same(sessions, [], 'no session opened')
      t.equal((await verify(tenant.code, token)).status, 200)
      t.equal((await login(app, tenant.code, 'newbie@example.test')).status, 200)
    },
  )

  t.test('register: no mail with verification off (the default)', async (t) => {
    const tenant = await createTenant(app)
    const key = await keyCred(app, tenant, ['users:create'])
    await mailer.idle()
    const before = smtp.messages.length
    t.equal(
      (await call(app, 'register', key, { body: { email: 'quiet@example.test', password: PASSWORD } }))
        .status,
      201,
    )
    await mailer.idle()
    t.equal(smtp.messages.length, before)
  })
})
