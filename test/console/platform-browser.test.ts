import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
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

// The first steps of the README in a real Chromium: the platform's admin signs in on a fresh service,
// is led to create the first tenant with its administrator, who then signs in to that tenant.

const ADMIN = {
  BOOTSTRAP_ADMIN_EMAIL: 'root@platform.test',
  BOOTSTRAP_ADMIN_PASSWORD: 'Platform-passphrase-42',
}

// Why more than .taprc's 120 s: a real browser on a shared 2-core machine; each step still waits at most 20 s.
t.setTimeout(300_000)
t.test(
  'console in Chromium: the platform admin creates a tenant with its admin, who then signs in',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t, ADMIN)
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    await signIn(page, origin, 'platform', ADMIN.BOOTSTRAP_ADMIN_EMAIL, ADMIN.BOOTSTRAP_ADMIN_PASSWORD)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    await page.getByRole('heading', { name: 'Create your first tenant' }).waitFor()
    t.pass('a fresh service leads its platform admin to the first tenant')
    t.same(await axeViolations(page), [], 'Overview (platform): no serious or critical axe violation')
    await screenshot(page, 'overview-platform')

    await page.getByRole('link', { name: 'Create the first tenant' }).click()
    await page.getByRole('heading', { level: 1, name: 'Tenants' }).waitFor()
    t.match(page.url(), `${origin}/console/tenants`, 'the Tenants screen has its own URL')
    await page.getByLabel('Tenant code').fill('acme')
    await page.getByLabel('Name').fill('Acme Corp')
    await page.getByLabel('Admin email').fill('ana@acme.test')
    await page.getByLabel('Admin password').fill('Acme-admin-pass-42')
    t.same(await axeViolations(page), [], 'Tenants, create form: no serious or critical axe violation')
    await screenshot(page, 'tenants-create')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Tenant Acme Corp created' }).waitFor()
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('cell', { name: 'Acme Corp', exact: true }).waitFor()
    t.pass('the new tenant is listed')

    // Deactivate and reactivate, each asking for confirmation first.
    await page.getByRole('button', { name: 'Deactivate Acme Corp' }).click()
    await page.getByRole('button', { name: 'Deactivate now' }).click()
    await page.getByRole('button', { name: 'Reactivate Acme Corp' }).click()
    await page.getByRole('button', { name: 'Deactivate Acme Corp' }).waitFor()
    t.pass('deactivated, then reactivated')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'tenants')
    }
    await page.setViewportSize({ width: 1440, height: 900 })

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    t.equal(
      await page.evaluate(() => sessionStorage.length),
      0,
      'signing out leaves nothing in sessionStorage',
    )

    await signIn(page, origin, 'acme', 'ana@acme.test', 'Acme-admin-pass-42')
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.equal(
      await page.getByRole('link', { name: 'Tenants' }).count(),
      0,
      'a tenant admin has no Tenants screen',
    )
    t.equal(await page.getByRole('link', { name: 'Users' }).count(), 1, 'but has Users')

    // The session survives a reload (refresh token in sessionStorage), and no token is in the address.
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.notMatch(page.url(), /token/i, 'no token in the URL')
    const stored = await page.evaluate(() => Object.keys(sessionStorage))
    t.same(
      stored.sort(),
      ['tessera.refreshToken', 'tessera.signedInAs'],
      'only the refresh token and who signed in are stored',
    )
    t.same(
      await page.evaluate(() => Object.entries(localStorage)),
      [['tessera.tenant', 'acme']],
      'localStorage holds the tenant code alone, no secret (issue 44: the tenant remembered)',
    )
    t.same(problems, [], 'no CSP violation or page error')
  },
)
