import t from 'tap'
import { mailerOf } from '../../src/modules/email/sender.js'
import { buildTestApp } from '../helpers/app.js'
import { call, login, mfaTokenIn, type As } from '../helpers/call.js'
import {
  activeSessions,
  auditRows,
  createTenant,
  createUser,
  PASSWORD,
  tokenFor,
} from '../helpers/fixtures.js'
import type { TenantFx, UserFx } from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { enroll, passkeyLogin, ORIGIN as RP_ORIGIN, RP_ID } from '../passkeys/support.js'
import { PK_ENV, signupWith, tenantWithKey } from '../publishable-keys/support.js'
import { startSmtp, tokenFrom } from './smtp.js'

// No pre-hijacked account (contract section 26, issue 41 finding 3): someone signs up with another
// person's address before that person does, and links a provider account, sets up a passkey, a second factor and a Client Key. The
// owner's password reset by mail is the first proof of the mailbox: it removes all of that and every
// session. A reset of a user whose address was verified already keeps them.

const WEBAUTHN = { webauthn: { rpId: RP_ID, rpName: 'Acme', origins: [RP_ORIGIN] } }
const NEW_PASSWORD = 'Owner-takes-it-back-5'

t.test('resetPassword: the first proof of a mailbox', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const app = await buildTestApp(t, {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'no-reply@example.test',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    ...PK_ENV,
  })
  const mailer = mailerOf(app.ctx)
  if (!mailer) throw new Error('mail is on')
  const db = (tenantId: string) => app.ctx.dbs.forTenant(tenantId)

  /** Grants a user direct permissions (by name), as an administrator could. */
  const grant = async (tenantId: string, userId: string, names: string[]) => {
    for (const name of names) {
      const perm = await db(tenantId)
        .selectFrom('permissions')
        .select('id')
        .where('name', '=', name)
        .where('tenant_id', 'is', null)
        .executeTakeFirstOrThrow()
      await db(tenantId)
        .insertInto('user_permissions')
        .values({ tenant_id: tenantId, user_id: userId, permission_id: perm.id })
        .execute()
    }
  }
  /** What the account holds: passkeys, the TOTP row, recovery codes, otp_enabled, email_verified. */
  const holdings = async (user: UserFx) => {
    const tdb = db(user.tenant.id)
    const [passkeys, otp, codes, row, identities, linkTokens] = await Promise.all([
      tdb.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute(),
      tdb.selectFrom('user_otp').select('user_id').where('user_id', '=', user.id).execute(),
      tdb.selectFrom('otp_recovery_codes').select('id').where('user_id', '=', user.id).execute(),
      tdb
        .selectFrom('users')
        .select(['otp_enabled', 'email_verified'])
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow(),
      tdb.selectFrom('user_identities').select('id').where('user_id', '=', user.id).execute(),
      tdb.selectFrom('federation_link_tokens').select('id').where('user_id', '=', user.id).execute(),
    ])
    return {
      identities: identities.length,
      linkTokens: linkTokens.length,
      passkeys: passkeys.length,
      otp: otp.length,
      recoveryCodes: codes.length,
      otpEnabled: row.otp_enabled,
      emailVerified: row.email_verified,
    }
  }
  /**
   * Sets up everything a second person could: a provider account linked (the tenant's provider, made by an
   * administrator) and a link token pending, a passkey, TOTP with recovery codes, a Client Key.
   */
  const setUpEverything = async (cred: As, user: UserFx) => {
    const admin = { token: await tokenFor(app, await createUser(app, user.tenant, { roles: ['admin'] })) }
    const provider = await call(app, 'createIdentityProvider', admin, {
      body: {
        name: 'Squatter’s provider',
        kind: 'oauth2',
        clientId: 'x',
        clientSecret: 'y',
        authorizationEndpoint: 'http://127.0.0.1:9/authorize',
        tokenEndpoint: 'http://127.0.0.1:9/token',
        userinfoEndpoint: 'http://127.0.0.1:9/user',
      },
    })
    if (provider.status !== 201) throw new Error(`createIdentityProvider: ${provider.raw}`)
    await db(user.tenant.id)
      .insertInto('user_identities')
      .values({
        tenant_id: user.tenant.id,
        user_id: user.id,
        provider_id: provider.data.id,
        subject: 'squatter',
      })
      .execute()
    const link = await call(app, 'createMyIdentityLinkToken', cred)
    if (link.status !== 200) throw new Error(`createMyIdentityLinkToken: ${link.raw}`)
    const { auth } = await enroll(app, cred)
    const setup = await call(app, 'setupMyOtp', cred)
    if (setup.status !== 200) throw new Error(`setupMyOtp: ${setup.raw}`)
    const code = totpAt(secretOfUri(setup.data.otpauthUri), app.ctx.clock.now())
    const confirmed = await call(app, 'confirmMyOtp', cred, { body: { code } })
    if (confirmed.status !== 200) throw new Error(`confirmMyOtp: ${confirmed.raw}`)
    const key = await call(app, 'createClientKey', cred, { body: { name: 'mine', scopes: ['users:read'] } })
    if (key.status !== 201) throw new Error(`createClientKey: ${key.raw}`)
    return { auth, key: key.data }
  }
  const keyRow = (id: string) =>
    app.ctx.dbs.main
      .selectFrom('client_keys')
      .select(['status', 'revoked_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  const forgotAndReset = async (tenant: TenantFx, email: string) => {
    const token = await tokenFrom(smtp, mailer, () =>
      call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: email } }),
    )
    return call(
      app,
      'resetPassword',
      {},
      {
        body: { tenantCode: tenant.code, token, newPassword: NEW_PASSWORD },
      },
    )
  }

  t.test(
    'an account signed up with another person’s address loses passkeys, TOTP, recovery codes, sessions and keys',
    async (t) => {
      const { tenant, key: publishable } = await tenantWithKey(app, { defaultRoles: ['user'] }, WEBAUTHN)
      const email = 'victim@example.test'
      const signed = await signupWith(app, publishable.key, { email, password: PASSWORD })
      t.equal(signed.status, 201, signed.raw)
      t.equal(signed.data.emailVerified, false)
      const attacker: UserFx = { id: signed.data.id, email, tenant }
      await grant(tenant.id, attacker.id, ['client-keys:create', 'users:read'])
      const session = await login(app, tenant.code, email)
      t.equal(session.status, 200)
      const cred = { token: session.data.accessToken }
      const { auth, key } = await setUpEverything(cred, attacker)
      t.same(await holdings(attacker), {
        identities: 1,
        linkTokens: 1,
        passkeys: 1,
        otp: 1,
        recoveryCodes: 10,
        otpEnabled: true,
        emailVerified: false,
      })
      t.equal((await call(app, 'listUsers', { key: key.key })).status, 200, 'the key works before')

      const res = await forgotAndReset(tenant, email)
      t.equal(res.status, 200)
      t.ok(res.data.sessionsRevoked >= 1)

      t.same(
        await holdings(attacker),
        {
          identities: 0,
          linkTokens: 0,
          passkeys: 0,
          otp: 0,
          recoveryCodes: 0,
          otpEnabled: false,
          emailVerified: true,
        },
        'the linked identity, the link token, the passkey, the second factor and its recovery codes are gone; the address is verified',
      )
      t.same(await activeSessions(app, attacker), [], 'every session revoked')
      const refresh = await call(app, 'refresh', null, { body: { refreshToken: session.data.refreshToken } })
      t.equal(refresh.status, 401, 'the attacker’s refresh token is dead')
      const row = await keyRow(key.id)
      t.equal(row.status, 'REVOKED', 'the key the user is behind is revoked')
      t.ok(row.revoked_at)
      const byKey = await call(app, 'listUsers', { key: key.key })
      t.equal(byKey.status, 401, 'its value is refused')
      const { res: byPasskey } = await passkeyLogin(app, tenant, auth)
      t.not(byPasskey.status, 200, 'the passkey no longer signs in')
      const owner = await login(app, tenant.code, email, NEW_PASSWORD)
      t.equal(owner.status, 200, 'the owner signs in with the password alone, no second factor asked')
      t.equal((await login(app, tenant.code, email)).status, 401, 'the attacker’s password is gone')
      const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
      t.same(
        rows.map((r) => [r.user_id, r.success]),
        [[attacker.id, true]],
        'one PASSWORD_RESET row',
      )
    },
  )

  t.test('an account registered with emailVerified false is cleared the same way', async (t) => {
    const tenant = await createTenant(app, WEBAUTHN)
    const user = await createUser(app, tenant, { roles: ['user'] })
    await grant(tenant.id, user.id, ['client-keys:create', 'users:read'])
    const { key } = await setUpEverything({ token: await tokenFor(app, user) }, user)
    t.equal((await forgotAndReset(tenant, user.email)).status, 200)
    t.same(await holdings(user), {
      identities: 0,
      linkTokens: 0,
      passkeys: 0,
      otp: 0,
      recoveryCodes: 0,
      otpEnabled: false,
      emailVerified: true,
    })
    t.equal((await keyRow(key.id)).status, 'REVOKED')
  })

  t.test('a reset of a user whose address was verified keeps its passkey, TOTP and keys', async (t) => {
    const tenant = await createTenant(app, WEBAUTHN)
    const user = await createUser(app, tenant, { roles: ['user'] })
    await db(tenant.id).updateTable('users').set({ email_verified: true }).where('id', '=', user.id).execute()
    await grant(tenant.id, user.id, ['client-keys:create', 'users:read'])
    const { auth, key } = await setUpEverything({ token: await tokenFor(app, user) }, user)
    t.equal((await forgotAndReset(tenant, user.email)).status, 200)
    t.same(await holdings(user), {
      identities: 1,
      linkTokens: 1,
      passkeys: 1,
      otp: 1,
      recoveryCodes: 10,
      otpEnabled: true,
      emailVerified: true,
    })
    t.same(await activeSessions(app, user), [], 'sessions end with every reset, as before')
    t.equal((await keyRow(key.id)).status, 'ACTIVE', 'the key stays')
    t.equal((await call(app, 'listUsers', { key: key.key })).status, 200)
    const { res } = await passkeyLogin(app, tenant, auth)
    t.equal(res.status, 200, 'the passkey still signs in')
  })

  t.test(
    'a second step begun with the old password dies with the reset (no pending mfaToken survives)',
    async (t) => {
      const tenant = await createTenant(app, WEBAUTHN)
      const user = await createUser(app, tenant, { roles: ['user'] })
      await db(tenant.id)
        .updateTable('users')
        .set({ email_verified: true })
        .where('id', '=', user.id)
        .execute()
      await grant(tenant.id, user.id, ['client-keys:create', 'users:read'])
      await setUpEverything({ token: await tokenFor(app, user) }, user)
      const stopped = await login(app, tenant.code, user.email)
      t.equal(stopped.code, 'OTP_REQUIRED')
      const mfaToken = mfaTokenIn(stopped)
      t.equal((await forgotAndReset(tenant, user.email)).status, 200)
      const left = await db(tenant.id)
        .selectFrom('mfa_tokens')
        .select('id')
        .where('user_id', '=', user.id)
        .execute()
      t.same(left, [], 'no pending second step is left')
      const res = await call(app, 'verifyLoginOtp', {}, { body: { mfaToken, code: '000000' } })
      t.equal(res.status, 401)
      t.equal(res.code, 'INVALID_CREDENTIALS')
    },
  )

  t.test('the keys of other users are left alone', async (t) => {
    const tenant = await createTenant(app)
    const owner = await createUser(app, tenant, { roles: ['user'] })
    const other = await createUser(app, tenant, { roles: ['user'] })
    await grant(tenant.id, other.id, ['client-keys:create', 'users:read'])
    const made = await call(
      app,
      'createClientKey',
      { token: await tokenFor(app, other) },
      {
        body: { name: 'theirs', scopes: ['users:read'] },
      },
    )
    t.equal(made.status, 201)
    t.equal((await forgotAndReset(tenant, owner.email)).status, 200)
    t.equal((await keyRow(made.data.id)).status, 'ACTIVE')
  })
})
