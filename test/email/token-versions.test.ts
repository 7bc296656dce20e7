import t from 'tap'
import { call, type As, type BodyOf } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  PASSWORD,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import { appWithMail, tokenFrom } from './smtp.js'

// Every one-time mail token dies when what it was for changes (contract section 26, issue 41 findings 7
// and 8): a reset or verification token is void once the user's email, password or status changed after
// it was issued, even when changed back. The token records the user's security_version at issuance.

const NEW_PASSWORD = 'A-brand-new-passphrase-7'

t.test('mail tokens and the user’s security version', async (t) => {
  const { smtp, app, mailer } = await appWithMail(t)
  /** A tenant, an administrator of it and a plain user the administrator may act on. */
  const setup = async () => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const user = await createUser(app, tenant, { roles: ['user'] })
    return { tenant, admin, user }
  }
  const resetToken = (tenant: TenantFx, user: UserFx) =>
    tokenFrom(smtp, mailer, () =>
      call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: user.email } }),
    )
  const verificationToken = (admin: As, user: UserFx) =>
    tokenFrom(smtp, mailer, () =>
      call(app, 'sendUserEmailVerification', admin, { params: { userId: user.id } }),
    )
  const reset = (tenant: TenantFx, token: string) =>
    call(app, 'resetPassword', {}, { body: { tenantCode: tenant.code, token, newPassword: NEW_PASSWORD } })
  const verify = (tenant: TenantFx, token: string) =>
    call(app, 'verifyEmail', {}, { body: { tenantCode: tenant.code, token } })
  const patch = async (admin: As, user: UserFx, body: BodyOf<'updateUser'>) => {
    const res = await call(app, 'updateUser', admin, { params: { userId: user.id }, body })
    if (res.status !== 200) throw new Error(`updateUser: ${res.raw}`)
  }

  t.test(
    'verifyEmail: 400 INVALID_EMAIL_TOKEN after the email changed and changed back (finding 7)',
    async (t) => {
      const { tenant, admin, user } = await setup()
      const token = await verificationToken(admin.cred, user)
      await patch(admin.cred, user, { email: 'elsewhere@example.test' })
      await patch(admin.cred, user, { email: user.email })
      const res = await verify(tenant, token)
      t.equal(res.status, 400)
      t.equal(res.code, 'INVALID_EMAIL_TOKEN')
      const rows = await auditRows(app, tenant.id, 'EMAIL_VERIFIED')
      t.same(
        rows.map((r) => [r.user_id, r.success, r.error_message]),
        [[user.id, false, 'INVALID_EMAIL_TOKEN']],
      )
    },
  )

  t.test('verifyEmail: 400 INVALID_EMAIL_TOKEN after a status change and back', async (t) => {
    const { tenant, admin, user } = await setup()
    const token = await verificationToken(admin.cred, user)
    await patch(admin.cred, user, { status: 'SUSPENDED' })
    await patch(admin.cred, user, { status: 'ACTIVE' })
    t.equal((await verify(tenant, token)).code, 'INVALID_EMAIL_TOKEN')
  })

  t.test(
    'verifyEmail: changes that are not the email, password or status leave the token good',
    async (t) => {
      const { tenant, admin, user } = await setup()
      const token = await verificationToken(admin.cred, user)
      await patch(admin.cred, user, { username: 'renamed-user' })
      t.equal((await verify(tenant, token)).status, 200)
    },
  )

  t.test(
    'resetPassword: 400 INVALID_EMAIL_TOKEN after the email changed and changed back (finding 8)',
    async (t) => {
      const { tenant, admin, user } = await setup()
      const token = await resetToken(tenant, user)
      await patch(admin.cred, user, { email: 'elsewhere@example.test' })
      await patch(admin.cred, user, { email: user.email })
      const res = await reset(tenant, token)
      t.equal(res.status, 400)
      t.equal(res.code, 'INVALID_EMAIL_TOKEN')
      const login = await call(app, 'login', null, {
        body: { tenantCode: tenant.code, identifier: user.email, password: PASSWORD },
      })
      t.equal(login.status, 200, 'the password is unchanged')
    },
  )

  t.test('resetPassword: 400 INVALID_EMAIL_TOKEN after the user changed its password', async (t) => {
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const token = await resetToken(tenant, me)
    const changed = await call(app, 'changeMyPassword', me.cred, {
      body: { currentPassword: PASSWORD, newPassword: 'Chosen-by-the-owner-1' },
    })
    t.equal(changed.status, 200)
    t.equal((await reset(tenant, token)).code, 'INVALID_EMAIL_TOKEN')
    const login = await call(app, 'login', null, {
      body: { tenantCode: tenant.code, identifier: me.email, password: 'Chosen-by-the-owner-1' },
    })
    t.equal(login.status, 200, 'the owner’s password stands')
  })

  t.test('resetPassword: 400 INVALID_EMAIL_TOKEN after an administrator set the password', async (t) => {
    const { tenant, admin, user } = await setup()
    const token = await resetToken(tenant, user)
    const set = await call(app, 'resetUserPassword', admin.cred, {
      params: { userId: user.id },
      body: { password: 'Set-by-the-admin-22' },
    })
    t.equal(set.status, 200)
    t.equal((await reset(tenant, token)).code, 'INVALID_EMAIL_TOKEN')
  })

  t.test('resetPassword: 400 INVALID_EMAIL_TOKEN after a status change and back', async (t) => {
    const { tenant, admin, user } = await setup()
    const token = await resetToken(tenant, user)
    await patch(admin.cred, user, { status: 'INACTIVE' })
    await patch(admin.cred, user, { status: 'ACTIVE' })
    const res = await reset(tenant, token)
    t.equal(res.status, 400)
    t.equal(res.code, 'INVALID_EMAIL_TOKEN')
    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.same(
      rows.filter((r) => r.user_id === user.id).map((r) => [r.success, r.error_message]),
      [[false, 'INVALID_EMAIL_TOKEN']],
    )
  })

  t.test(
    'resetPassword: one reset voids the user’s verification token (its own password change)',
    async (t) => {
      const { tenant, admin, user } = await setup()
      const verification = await verificationToken(admin.cred, user)
      const token = await resetToken(tenant, user)
      t.equal((await reset(tenant, token)).status, 200)
      t.equal((await verify(tenant, verification)).code, 'INVALID_EMAIL_TOKEN')
    },
  )
})
