import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { createManualClock } from '../../src/lib/clock.js'
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

// Sign-in in a real Chromium: a wrong password shows the contract's message and the request id; a user
// with a second factor is asked for the "Code" next, and gets in with one from an authenticator. An act that
// needs a recent sign-in asks for the password again in place.

// Why more than .taprc's 120 s: a real browser on a shared 2-core machine; each step still waits at most 20 s.
t.setTimeout(300_000)
t.test('console in Chromium: sign in with the second factor', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const token = await tokenFor(app, user)
  const setup = await call(app, 'setupMyOtp', { token }, { body: {} })
  t.equal(setup.status, 200, 'an authenticator set up through the API')
  const secret = secretOfUri(setup.data.otpauthUri)
  const confirmed = await call(app, 'confirmMyOtp', { token }, { body: { code: totpAt(secret, Date.now()) } })
  t.equal(confirmed.status, 200, 'and confirmed')

  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)

  await signIn(page, origin, tenant.code, user.email, 'not-the-password-1')
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.match(await alert.innerText(), /Invalid credentials/i, 'a failure shows the contract’s message')
  t.match(await alert.innerText(), /request id [0-9a-f-]+/, 'and the request id')
  t.same(await axeViolations(page), [], 'Sign in: no serious or critical axe violation')
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 })
    await screenshot(page, 'sign-in')
  }

  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  const code = page.getByLabel('Code')
  await code.waitFor()
  t.pass('the second factor is asked for')
  // A code of the next step: the one confirmed above may be the current one, which is spent.
  await code.fill(totpAt(secret, Date.now() + 30_000))
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  t.pass('signed in with the code')
  t.same(problems, [], 'no CSP violation or page error')
})

t.test(
  'console in Chromium: REAUTHENTICATION_REQUIRED asks for the password in place, then the act goes on',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const clock = createManualClock()
    const app = await buildTestApp(t, {}, { clock })
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { roles: ['admin'] })
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    await signIn(page, origin, tenant.code, admin.email, PASSWORD)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    // Eleven minutes on the service's clock: the sign-in is older than the 10 that creating a key allows,
    // and the access token (15 minutes) is still valid.
    clock.advance(11 * 60_000)
    await page.getByRole('link', { name: 'Keys' }).click()
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByLabel('Name', { exact: true }).fill('late key')
    await page.getByRole('checkbox', { name: 'users:read' }).check()
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' })
    await dialog.waitFor()
    t.same(await axeViolations(page), [], 'the dialog: no serious or critical axe violation')
    await screenshot(page, 'reauth')
    await dialog.getByLabel('Password').fill(PASSWORD)
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    t.match(await page.getByLabel('Key value').inputValue(), /^ck_/, 'signed in again, the key was created')
    await t.resolveMatch(dialog.count(), 0, 'the dialog is gone')
    t.same(problems, [], 'no CSP violation or page error')
  },
)

t.test(
  'console in Chromium: a shared link to a screen lands there after sign-in, never off the console; the tenant remembered',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { roles: ['admin'] })
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    const signInAt = (path: string) => signIn(page, origin, tenant.code, admin.email, PASSWORD, path)
    await signInAt('/console/audit-log?action=LOGIN')
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor()
    t.equal(page.url(), `${origin}/console/audit-log?action=LOGIN`, 'the shared link’s screen, query and all')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await signInAt(`/console/sign-in?next=${encodeURIComponent('//evil.example/x')}`)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.equal(page.url(), `${origin}/console`, 'a crafted next leads to the overview, not off the console')

    // The tenant remembered per browser (issue 44): after signing out, and in a new tab of the same browser.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    t.equal(await page.getByLabel('Tenant').inputValue(), tenant.code, 'signed out: the tenant kept')
    const tab = await context.newPage()
    await tab.goto(`${origin}/console/sign-in`)
    await tab.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    t.equal(await tab.getByLabel('Tenant').inputValue(), tenant.code, 'a new tab: the tenant kept')
    // A mail's link names its tenant: the sign-in form after it starts there.
    await tab.goto(`${origin}/console/reset-password?tenant=from-the-mail&token=x`)
    await tab.getByRole('heading', { level: 1 }).first().waitFor()
    await tab.goto(`${origin}/console/sign-in`)
    await tab.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    t.equal(await tab.getByLabel('Tenant').inputValue(), 'from-the-mail', 'the mail link’s tenant')
    t.same(problems, [], 'no CSP violation or page error')
  },
)
