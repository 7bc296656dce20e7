import t from 'tap'
import { call } from '../helpers/call.js'
import { createTenant, createUser, userWithToken } from '../helpers/fixtures.js'
import { appWithMail, tokenFrom, tokenOf } from '../email/smtp.js'
import {
  axeViolations,
  buildConsole,
  launch,
  listen,
  NO_BROWSER,
  openPage,
  screenshot,
  signIn,
} from './browser.js'

// A forgotten password, as a person recovers it in a browser: "Forgot your password?" on the console's
// sign-in, the mail, the service's own /console/reset-password page from its link, then a sign-in with the
// new password (contract sections 18 and 19). And an address proved the same way: the verification mail's
// link opens the service's /console/verify-email page, whose button confirms it.

// Why more than .taprc's 120 s: a real browser on a shared 2-core machine; each step still waits at most 20 s.
t.setTimeout(300_000)
t.test(
  'forgotPassword and resetPassword in Chromium: the console asks for the mail, its link sets the password',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const { app, smtp, mailer } = await appWithMail(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['admin'] })
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    await page.goto(`${origin}/console`)
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor()
    t.same(await axeViolations(page), [], 'Forgot your password?: no serious or critical axe violation')
    await page.getByLabel('Tenant').fill(tenant.code)
    await page.getByLabel('Email, username or CPF/CNPJ').fill(user.email)
    await page.getByRole('button', { name: 'Send the link' }).click()
    const status = page.getByRole('status')
    await status.waitFor()
    t.match(
      await status.innerText(),
      /on its way/,
      'the page says a mail is on its way, if the account exists',
    )
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'forgot-password')
    }

    await mailer.idle()
    t.equal(await smtp.waitForCount(1), 1, 'one mail arrived')
    const mail = smtp.messages[0]!
    t.match(mail.text ?? '', /\/console\/reset-password\?tenant=/, 'its link is the console’s reset page')
    const token = tokenOf(mail)

    const NEW_PASSWORD = 'Recovered-passphrase-7'
    await page.goto(`${origin}/console/reset-password?tenant=${tenant.code}&token=${token}`)
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    await page.getByLabel('New password').fill(NEW_PASSWORD)
    await page.getByRole('button', { name: 'Set the password' }).click()
    await page.getByText('Your password was changed').waitFor()
    t.equal(page.url(), `${origin}/console/reset-password`, 'the token left the address bar')
    t.pass('the reset page set the new password')

    await signIn(page, origin, tenant.code, user.email, NEW_PASSWORD)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.pass('signed in with the new password')
    t.same(problems, [], 'no CSP violation or page error')
  },
)

t.test(
  'verifyEmail in Chromium: the mail’s link opens /console/verify-email, whose button confirms the address',
  { skip: NO_BROWSER },
  async (t) => {
    const { app, smtp, mailer } = await appWithMail(t)
    const tenant = await createTenant(app)
    const me = await userWithToken(app, tenant)
    const db = app.ctx.dbs.forTenant(tenant.id)
    await db.updateTable('users').set({ email_verified: false }).where('id', '=', me.id).execute()
    const token = await tokenFrom(smtp, mailer, async () => {
      t.equal((await call(app, 'sendMyEmailVerification', me.cred)).status, 202)
    })
    t.match(
      smtp.messages.at(-1)?.text ?? '',
      /\/console\/verify-email\?tenant=/,
      'its link is the verify page',
    )
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    const link = `${origin}/console/verify-email?tenant=${tenant.code}&token=${token}`
    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'Confirm your email address' }).waitFor()
    t.equal(page.url(), `${origin}/console/verify-email`, 'the token left the address bar')
    t.same(await axeViolations(page), [], 'verify-email: no serious or critical axe violation')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'verify-email')
    }
    await page.getByRole('button', { name: 'Confirm my address' }).click()
    await page.getByText('Your address is confirmed').waitFor()
    const row = await db
      .selectFrom('users')
      .select('email_verified')
      .where('id', '=', me.id)
      .executeTakeFirst()
    t.equal(row?.email_verified, true, 'the address is verified in the database')

    await page.goto(link)
    await page.getByRole('button', { name: 'Confirm my address' }).click()
    await page.getByText('This link is no longer valid').waitFor()
    const alert = page.getByRole('alert').filter({ hasText: 'Request id' })
    t.match(await alert.innerText(), /INVALID_EMAIL_TOKEN/, 'the contract’s code')
    t.match(await alert.innerText(), /request id [0-9a-f-]+/, 'and the request id')
    t.pass('the same link a second time is refused: its token was single-use')
    t.same(problems, [], 'no CSP violation or page error')
  },
)
