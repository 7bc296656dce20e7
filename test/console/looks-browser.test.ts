import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, insertRole, PASSWORD } from '../helpers/fixtures.js'
import { buildConsole, launch, listen, NO_BROWSER, openPage, signIn, axeAtBothWidths } from './browser.js'

// The console's looks in a real Chromium (issue 44, "Looks and locale"): three kinds of button (primary,
// secondary, danger), counts in the right number, and a dark theme that follows the system, with axe-core's
// colour contrast checked in both schemes at 375 and 1440 px.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

/** The computed background and text colours of the first element the locator finds. */
async function colours(page: Page, selector: string) {
  return page
    .locator(selector)
    .first()
    .evaluate((el) => {
      const s = getComputedStyle(el)
      return { background: s.backgroundColor, color: s.color }
    })
}

/** The relative luminance of an `rgb(r, g, b)` colour, 0 (black) to 1 (white). */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
    const c = Number(v) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0)
}

t.setTimeout(300_000)
t.test('console in Chromium: buttons, counts and the dark theme', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
  await insertRole(app, tenant, 'ops', 10, ['users:read'])
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)
  await signIn(page, origin, tenant.code, admin.email, PASSWORD)
  await h1(page, 'Overview')

  // Light: the page's act is solid, the others are outlined, and a removal asks in red first.
  await page.goto(`${origin}/console/roles`)
  await h1(page, 'Roles')
  const create = await colours(page, 'button.primary')
  t.ok(luminance(create.background) < 0.2, `"Create role" is solid (${create.background})`)
  await page.getByRole('link', { name: 'ops' }).click()
  await h1(page, /ops/)
  const ask = page.getByRole('button', { name: 'Delete role ops' })
  t.equal(await ask.getAttribute('class'), 'danger-quiet')
  const quiet = await colours(page, 'button.danger-quiet')
  t.ok(luminance(quiet.background) > 0.8, `the first click is outlined (${quiet.background})`)
  await ask.click()
  const confirm = await colours(page, 'button.danger')
  t.ok(luminance(confirm.background) < 0.2, `the confirming button is solid red (${confirm.background})`)
  t.match(confirm.background, /^rgb\(179, 38, 30\)/)
  await page.getByRole('button', { name: 'Cancel' }).click()

  // One user: "1 user", not "1 users".
  await page.goto(`${origin}/console/users`)
  await h1(page, 'Users')
  await page.getByText('1 user', { exact: true }).waitFor()
  await axeAtBothWidths(t, page, 'users-light')

  // Dark, as the system asks: the page, its panels and buttons change; contrast holds on every screen.
  await page.emulateMedia({ colorScheme: 'dark' })
  const body = await colours(page, 'body')
  t.ok(luminance(body.background) < 0.05, `the dark page (${body.background})`)
  t.ok(luminance(body.color) > 0.7, `light text (${body.color})`)
  for (const [path, heading, name] of [
    ['/console', 'Overview', 'overview-dark'],
    ['/console/users', 'Users', 'users-dark'],
    ['/console/roles', 'Roles', 'roles-dark'],
    ['/console/settings', 'Settings', 'settings-dark'],
    ['/console/audit-log', 'Audit log', 'audit-dark'],
    ['/console/account', 'Account', 'account-dark'],
  ] as const) {
    await page.goto(`${origin}${path}`)
    await h1(page, heading)
    await axeAtBothWidths(t, page, name)
  }
  const panel = await colours(page, '.panel')
  t.ok(luminance(panel.background) < 0.05, `a dark panel (${panel.background})`)
  // Signed out, the sign-in page follows the scheme too.
  await page.getByRole('button', { name: 'Sign out' }).click()
  await h1(page, 'Sign in')
  await axeAtBothWidths(t, page, 'sign-in-dark')
  t.same(problems, [])
})
