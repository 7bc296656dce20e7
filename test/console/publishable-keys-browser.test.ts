import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { serveSignupSite } from '../helpers/signup-site.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, insertRole, PASSWORD, userWithToken } from '../helpers/fixtures.js'
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

// The Keys screen's publishable keys in a real Chromium (contract sections 19 and 20): create one with an
// allowed origin and a default role (a role with management permissions refused with the service's
// words), its page with the key and the sign-up snippet, the snippet pasted into a page of another origin
// signing a visitor up, the hourly sign-ups edited, the key revoked after a confirming click; and a reader
// (client-keys:read only) who sees the keys and no control.

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

/** The snippet as a site pastes it into a document of its own, served from another origin. */
function serveSite(t: Test, snippet: () => string): Promise<string> {
  return serveSignupSite(
    t,
    () =>
      '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8" /><title>Sign up</title></head>\n' +
      `<body>\n${snippet()}\n</body>\n</html>\n`,
  )
}

t.setTimeout(300_000)
t.test(
  'console in Chromium: publishable keys created, used through their snippet, edited, revoked',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    // An easy proof of work, so the visitor's widget solves in milliseconds.
    const app = await buildTestApp(t, { SIGNUP_CHALLENGE_MAX_NUMBER: '2000' })
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    const caller = await userWithToken(app, tenant, { roles: ['admin'] })
    await insertRole(app, tenant, 'key-reader', 10, ['client-keys:read'])
    const reader = await createUser(app, tenant, { email: 'reader@acme.test', roles: ['key-reader'] })
    const db = app.ctx.dbs.forTenant(tenant.id)
    const stored = () =>
      db
        .selectFrom('publishable_keys')
        .select(['id', 'key', 'allowed_origins', 'default_roles', 'signups_per_hour', 'status', 'revoked_at'])
        .where('tenant_id', '=', tenant.id)
        .orderBy('created_at')
        .execute()

    const origin = await listen(app)
    let snippet = ''
    const site = await serveSite(t, () => snippet)
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    await signIn(page, origin, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    await page.goto(`${origin}/console/keys`)
    await h1(page, 'Keys')
    await page.getByRole('heading', { level: 2, name: 'Publishable keys' }).waitFor()
    await page.getByText('No publishable key yet.').waitFor()
    t.pass('the empty state')

    // Create: a role with management permissions is refused with the service's words, then a plain one.
    await page.getByRole('button', { name: 'Create publishable key' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Sign-up page')
    await page.getByLabel('Allowed origins', { exact: true }).fill(site)
    t.equal(
      await page.getByLabel('Sign-ups per hour').inputValue(),
      '100',
      'sign-ups per hour: 100 by default',
    )
    // A form never offers what it will refuse: the admin role (management permissions) is not a choice.
    await page.getByRole('checkbox', { name: 'user', exact: true }).waitFor()
    t.equal(await page.getByRole('checkbox', { name: 'admin', exact: true }).count(), 0, 'admin not offered')
    await page.waitForLoadState('networkidle')
    t.same(await axeViolations(page), [], 'the create form: no serious or critical axe violation')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'publishable-key-new')
    }
    await page.getByRole('checkbox', { name: 'user', exact: true }).check()
    await page.getByRole('button', { name: 'Create', exact: true }).click()

    await h1(page, 'Publishable key Sign-up page')
    t.match(page.url(), /\/console\/keys\/publishable\/[0-9a-f-]{36}$/, 'the new key’s page, its own URL')
    const [created, ...others] = await stored()
    t.same(others, [], 'one key')
    if (!created) throw new Error('no key stored')
    t.match(created, {
      allowed_origins: [site],
      default_roles: ['user'],
      signups_per_hour: 100,
      status: 'ACTIVE',
      revoked_at: null,
    })
    t.match(created.key, /^pk_[A-Za-z0-9_-]{43,}$/)
    await page.getByText(created.key, { exact: true }).waitFor()
    t.pass('the key is shown whole')
    const shown =
      (await page.getByRole('region', { name: 'HTML of the sign-up snippet' }).textContent()) ?? ''
    t.match(shown, `const KEY = "${created.key}"`, 'the snippet carries the key')
    t.match(shown, `challengeurl="${origin}/api/v1/signup/challenge"`, 'the service’s challenge')
    t.match(shown, '/api/v1/signup`', 'and its sign-up')
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    await page.getByRole('button', { name: 'Copy snippet' }).click()
    await page
      .getByRole('status')
      .filter({ hasText: /Copied\.|Could not copy/ })
      .waitFor()
    await page.waitForLoadState('networkidle')
    t.same(await axeViolations(page), [], 'a publishable key’s page: no serious or critical axe violation')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'publishable-key')
    }

    // The snippet, pasted into a page of the key's origin, signs a visitor up.
    snippet = shown
    const visitor = await context.newPage()
    const failures: string[] = []
    visitor.on('pageerror', (e) => failures.push(e.message))
    visitor.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText ?? ''}`))
    visitor.on('console', (m) => {
      if (m.type() === 'error') failures.push(`console: ${m.text()}`)
    })
    await visitor.goto(`${site}/`)
    await visitor.getByLabel('Email').fill('visitor@acme.test')
    await visitor.getByLabel('Password').fill('Browser-signup-1')
    await visitor.getByRole('checkbox').click()
    await visitor.getByText('Verified', { exact: true }).first().waitFor()
    await visitor.getByRole('button', { name: 'Sign up' }).click()
    await visitor.getByText('Welcome, visitor@acme.test').waitFor({ timeout: 30_000 })
    t.same(failures, [], 'the snippet’s page: no page error, no failed request')
    const user = await db
      .selectFrom('users')
      .select(['id', 'email_verified'])
      .where('tenant_id', '=', tenant.id)
      .where('email', '=', 'visitor@acme.test')
      .executeTakeFirstOrThrow()
    t.equal(user.email_verified, false)
    const got = await call(app, 'getUser', caller.cred, { params: { userId: user.id } })
    t.equal(got.status, 200)
    if (got.status === 200) t.same(got.data.roles, ['user'], 'the visitor got the key’s default role')
    await visitor.close()

    // Edit: the sign-ups per hour, and nothing else is sent.
    await page.bringToFront()
    await page.getByLabel('Sign-ups per hour').fill('25')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    t.match((await stored())[0], { signups_per_hour: 25, default_roles: ['user'], allowed_origins: [site] })
    await page.getByRole('definition').filter({ hasText: /^25$/ }).waitFor()
    t.pass('the page shows the new figure')

    // Revoke: asks first; then the key is REVOKED, its snippet and controls are gone, its sign-ups refused.
    await page.getByRole('button', { name: 'Revoke Sign-up page' }).click()
    await page.getByRole('group', { name: 'Revoke Sign-up page' }).waitFor()
    t.same(await axeViolations(page), [], 'the revoke confirmation: no serious or critical axe violation')
    await page.getByRole('button', { name: 'Revoke now' }).click()
    await page.getByRole('definition').filter({ hasText: 'REVOKED' }).waitFor()
    const revoked = (await stored())[0]
    t.equal(revoked?.status, 'REVOKED')
    t.not(revoked?.revoked_at, null, 'revokedAt set')
    t.equal(await page.getByRole('region', { name: 'HTML of the sign-up snippet' }).count(), 0, 'no snippet')
    t.equal(await page.getByRole('button', { name: /^(Save changes|Revoke)/ }).count(), 0, 'no control')
    const challenge = await call(app, 'getSignupChallenge', {
      headers: { 'x-publishable-key': created.key, origin: site },
    })
    t.equal(challenge.status, 401, 'the revoked key is refused')

    // The list: the revoked key without controls, an active one (made over the API) with them.
    const landing = await call(app, 'createPublishableKey', caller.cred, {
      body: { name: 'Landing page', allowedOrigins: ['https://www.acme.test'], defaultRoles: ['user'] },
    })
    t.equal(landing.status, 201)
    await page.getByRole('link', { name: '← Keys' }).click()
    await h1(page, 'Keys')
    const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name }) })
    await row('Landing page').waitFor()
    t.match(await row('Sign-up page').innerText(), /REVOKED/)
    t.equal(await row('Sign-up page').getByRole('button').count(), 1, 'a revoked key: its Copy button only')
    t.equal(
      await row('Landing page').getByRole('button', { name: 'Revoke Landing page' }).count(),
      1,
      'an active one: Revoke',
    )
    await page.getByRole('link', { name: 'Edit Landing page' }).waitFor()
    await page.waitForLoadState('networkidle')
    t.same(
      await axeViolations(page),
      [],
      'the Keys screen with publishable keys: no serious or critical axe violation',
    )
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'publishable-keys')
    }

    // A reader (client-keys:read only) sees the keys, their values and snippets, and no control.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(page, origin, tenant.code, reader.email, PASSWORD)
    await h1(page, 'Overview')
    await page.goto(`${origin}/console/keys`)
    await h1(page, 'Keys')
    await row('Landing page').waitFor()
    if (landing.status === 201) await page.getByText(landing.data.key, { exact: true }).waitFor()
    t.equal(
      await page.getByRole('button', { name: /^(Create publishable key|Revoke)/ }).count(),
      0,
      'no Create, no Revoke',
    )
    t.equal(await page.getByRole('link', { name: /^Edit / }).count(), 0, 'no Edit')
    await page.getByRole('link', { name: 'Landing page', exact: true }).click()
    await h1(page, 'Publishable key Landing page')
    await page.getByRole('region', { name: 'HTML of the sign-up snippet' }).waitFor()
    t.equal(await page.getByRole('button', { name: /^(Save changes|Revoke)/ }).count(), 0, 'no control')
    t.equal(await page.getByRole('textbox').count(), 0, 'no field')

    t.same(problems, [], 'no CSP violation or page error')
  },
)
