import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'
import { client, discover, listeningApp, registerClient } from '../helpers/oidc.js'
import { axeAtBothWidths, buildConsole, launch, listen, NO_BROWSER, openPage, signIn } from './browser.js'

// Issue 44, "Looks and locale", in a real Chromium: a tenant's branding set in Settings (a name, a logo picked
// as a file, a colour), then shown on the public pages after signing out: the sign-in page and the mail link's
// reset page show the name and the logo, and their primary button takes the colour with readable text on it;
// so does the OpenID provider's sign-in page, which is the console's sign-in for the issuer's tenant.

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

// A real 1×1 PNG, so the browser decodes it (the service checks its first bytes only).
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)
const LOGO = `data:image/png;base64,${PNG.toString('base64')}`
// The application's redirect URI: the test never follows it (only the sign-in page is looked at).
const CALLBACK = 'http://127.0.0.1:9/cb'

const brandingOf = async (app: TestApp, tenantId: string) =>
  (
    await app.ctx.dbs.main
      .selectFrom('tenants')
      .select('auth_config')
      .where('id', '=', tenantId)
      .executeTakeFirstOrThrow()
  ).auth_config.branding

/** The primary button's background and text colours, as the browser computed them. */
const buttonColours = (page: Page, name: string) =>
  page.getByRole('button', { name, exact: true }).evaluate((b) => {
    const style = getComputedStyle(b)
    return { background: style.backgroundColor, text: style.color }
  })

/** The page shows the tenant's name and its logo (decoded by the browser, not a broken image). */
async function showsBrand(t: Test, page: Page, where: string) {
  await page.getByText('Acme Widgets', { exact: true }).waitFor()
  const logo = page.locator('img.brand-logo')
  t.equal(await logo.getAttribute('src'), LOGO, `${where}: the logo`)
  t.ok(
    await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
    `${where}: decoded`,
  )
}

t.setTimeout(300_000)
t.test(
  'console in Chromium: branding set in Settings shows on the sign-in and reset pages',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const origin = await listen(app)
    const tenant = await createTenant(app, { rateLimits: { requestsPerMinute: null, loginPerMinute: 20 } })
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`)
    })
    await signIn(page, origin, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    // Settings → Branding: off until switched on, then a name, a logo file (with its preview) and a colour.
    await page.getByRole('link', { name: 'Settings' }).click()
    await h1(page, 'Settings')
    const branding = page.getByRole('group', { name: 'Branding' })
    await branding.getByLabel('Branding on').check()
    await branding.getByLabel('Name shown on the sign-in page').fill('Acme Widgets')
    await branding.getByLabel('Logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG })
    await branding.getByRole('img', { name: 'Logo: preview' }).waitFor()
    await branding.getByLabel('Primary colour').fill('#7a1fa2')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.getByText('Settings saved. Changed: Branding.').waitFor()
    t.same(
      await brandingOf(app, tenant.id),
      { displayName: 'Acme Widgets', logo: LOGO, color: '#7a1fa2' },
      'stored as the API takes it',
    )
    await axeAtBothWidths(t, page, 'settings-branding')

    // Refused in the page before any request: a file of another type.
    await branding.getByLabel('Logo').setInputFiles({
      name: 'logo.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
    })
    await branding.getByRole('alert').filter({ hasText: 'PNG, JPEG or WebP' }).waitFor()

    // Signed out: the sign-in page (the remembered tenant) shows the brand, the button its colour.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await h1(page, 'Sign in')
    t.equal(await page.getByLabel('Tenant').inputValue(), tenant.code, 'the remembered tenant')
    await showsBrand(t, page, 'sign-in')
    t.same(
      await buttonColours(page, 'Sign in'),
      { background: 'rgb(122, 31, 162)', text: 'rgb(255, 255, 255)' },
      'the brand colour, white text on a dark colour',
    )
    await axeAtBothWidths(t, page, 'sign-in-branded')

    // Another tenant typed in: the brand goes (its own, none, takes its place).
    await page.getByLabel('Tenant').fill('platform')
    await page.locator('img.brand-logo').waitFor({ state: 'detached' })
    t.equal(await page.getByText('Acme Widgets').count(), 0, 'another tenant: not this brand')

    // The mail link's reset page, for a light colour: dark text on it.
    const light = await call(
      app,
      'updateTenantConfig',
      { token: await tokenFor(app, admin) },
      {
        params: { id: tenant.id },
        body: { branding: { color: '#ffd54f' } },
      },
    )
    t.equal(light.status, 200)
    await page.goto(`${origin}/console/reset-password?tenant=${tenant.code}&token=not-a-real-token`)
    await h1(page, 'Choose a new password')
    await showsBrand(t, page, 'reset')
    t.same(
      await buttonColours(page, 'Set the password'),
      { background: 'rgb(255, 213, 79)', text: 'rgb(0, 0, 0)' },
      'a light colour: black text on it',
    )
    await axeAtBothWidths(t, page, 'reset-password-branded')
    t.same(problems, [], 'no page error, CSP violation or console error')
  },
)

t.test(
  'console in Chromium: the OpenID provider’s sign-in page shows its tenant’s branding',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const { app, base } = await listeningApp(t)
    const tenant = await createTenant(app, {
      branding: { displayName: 'Acme Widgets', logo: LOGO, color: '#1a7f37' },
    })
    const registered = await registerClient(app, tenant, { name: 'Invoices', redirectUris: [CALLBACK] })
    const config = await discover(base, tenant, registered.clientId, registered.clientSecret)
    const verifier = client.randomPKCECodeVerifier()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: client.randomState(),
    })
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    await page.goto(url.href)
    await h1(page, 'Sign in to Invoices')
    await showsBrand(t, page, 'interaction')
    t.same(
      await buttonColours(page, 'Sign in'),
      { background: 'rgb(26, 127, 55)', text: 'rgb(255, 255, 255)' },
      'the brand colour on the provider’s sign-in button',
    )
    await axeAtBothWidths(t, page, 'interaction-branded')
    t.same(problems, [])
  },
)
