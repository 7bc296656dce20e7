import t from 'tap'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { appWithMail, tokenOf } from '../email/smtp.js'
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
// new password (contract sections 18 and 19).

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
    t.pass('the reset page set the new password')

    await signIn(page, origin, tenant.code, user.email, NEW_PASSWORD)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.pass('signed in with the new password')
    t.same(problems, [], 'no CSP violation or page error')
  },
)
