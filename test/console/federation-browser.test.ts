import t from 'tap'
import type { BrowserContext, Page } from 'playwright-core'
import { call } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'
import { client, discover, listeningApp, registerClient } from '../helpers/oidc.js'
import { startUpstream, type Upstream, type UpstreamPerson } from '../helpers/upstream.js'
import { axeViolations, buildConsole, launch, NO_BROWSER, openPage, screenshot, signIn } from './browser.js'

// Sign-in with another identity provider in a real Chromium (contract section 24, "Console"): an administrator
// adds the tenant's provider on Settings → Identity providers (reading the callback URL to register), edits
// and at the end deletes it; a person links an identity from Account and unlinks it; "Continue with {name}"
// goes through a real upstream oidc-provider on loopback (its scripted person signs in and consents) and
// lands signed in, on the console's sign-in and on an application's (section 23); a flow that ends with an
// error shows its sentence.

const APP_CB = 'http://127.0.0.1:9/cb'
const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

/** The next person at the upstream, with no upstream session left in the browser (it would sign the last one in). */
async function nextPerson(context: BrowserContext, upstream: Upstream, person: UpstreamPerson) {
  // Why all cookies: the service keeps none between flows (its tokens live in sessionStorage), and cookies
  // of 127.0.0.1 are shared by the service's port and the upstream's.
  await context.clearCookies()
  upstream.person = person
}

t.setTimeout(300_000)
t.test(
  'console in Chromium: identity providers, linked identities, Continue with a provider',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
    // Why passkeys on: without auth_config.webauthn, Account's passkey list is answered 409 (shown as a fact).
    const tenant = await createTenant(app, { webauthn: { rpId: '127.0.0.1', origins: [base] } })
    const callback = `${base}/t/${tenant.code}/federation/callback`
    const upstream = await startUpstream(t, { redirectUris: [callback] })
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    const adminCred = { token: await tokenFor(app, admin) }
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    await signIn(page, base, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    // Settings leads to the screen; the callback URL is there before any provider.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('link', { name: 'Manage identity providers' }).click()
    await h1(page, 'Identity providers')
    const callbackPanel = page.getByRole('region', { name: 'Callback URL' })
    await callbackPanel.getByText(callback, { exact: true }).waitFor()
    await page.getByText('No identity provider yet', { exact: false }).waitFor()
    t.same(await axeViolations(page), [], 'the empty screen: no serious or critical axe violation')

    // Create one with explicit discovery, creating accounts at a first sign-in.
    await page.getByRole('button', { name: 'Add an identity provider' }).click()
    t.ok(await page.getByRole('radio', { name: 'Google' }).isChecked(), 'a preset by default')
    await page.getByRole('radio', { name: 'Another OpenID Connect provider' }).check()
    await page.getByLabel('Name on the sign-in button').fill('Acme ID')
    await page.getByLabel('Issuer URL').fill(upstream.issuer)
    await page.getByLabel('Client ID').fill(upstream.clientId)
    await page.getByLabel('Client secret').fill(upstream.clientSecret)
    await page.getByLabel('Create an account at a first sign-in').check()
    t.same(await axeViolations(page), [], 'the form: no serious or critical axe violation')
    if (process.env.SCREENSHOTS) await screenshot(page, 'identity-provider-create')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Acme ID was added.' }).waitFor()
    await page.getByRole('cell', { name: 'Acme ID', exact: true }).waitFor()
    const listed = await call(app, 'listIdentityProviders', adminCred)
    t.equal(listed.data.total, 1, 'one provider')
    const created = listed.data.items[0]!
    t.match(created, { name: 'Acme ID', kind: 'oidc', issuer: upstream.issuer, allowSignup: true })
    t.equal(created.callbackUrl, callback, 'the URL shown is the one the service answers')
    t.notOk((await page.content()).includes(upstream.clientSecret), 'the secret is never shown')

    // Edit: the name only (the secret left empty keeps it).
    await page.getByRole('button', { name: 'Edit Acme ID' }).click()
    await page.getByLabel('Name on the sign-in button').fill('Acme')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Acme was saved.' }).waitFor()
    t.same(await axeViolations(page), [], 'the list: no serious or critical axe violation')
    if (process.env.SCREENSHOTS) await screenshot(page, 'identity-providers')

    // Account: link an identity at the upstream, then unlink it (the password still signs in).
    await nextPerson(context, upstream, { sub: 'admin-upstream', email: admin.email, email_verified: true })
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Account' }).click()
    const linked = page.getByRole('region', { name: 'Linked identities' })
    await linked.getByRole('button', { name: 'Link Acme' }).click()
    await h1(page, 'Account')
    await linked.getByRole('status').filter({ hasText: 'Linked Acme.' }).waitFor()
    await linked.getByRole('listitem').filter({ hasText: admin.email }).waitFor()
    t.equal(new URL(page.url()).pathname, '/console/account', 'back on Account')
    t.same(await axeViolations(page), [], 'Account: no serious or critical axe violation')
    await linked.getByRole('button', { name: 'Unlink Acme' }).click()
    await linked.getByRole('button', { name: 'Unlink it' }).click()
    await linked.getByRole('status').filter({ hasText: 'Unlinked Acme.' }).waitFor()
    await linked.getByRole('button', { name: 'Link Acme' }).waitFor()

    // Signed out: the sign-in page offers the provider once the tenant is typed; it signs a newcomer up.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await h1(page, 'Sign in')
    await nextPerson(context, upstream, {
      sub: 'newcomer',
      email: 'newcomer@acme.test',
      email_verified: true,
    })
    // The sign-in page starts at the tenant this browser last used (issue 44); another tenant has no provider.
    await page.getByRole('button', { name: 'Continue with Acme' }).waitFor()
    t.pass('the remembered tenant’s provider is offered at once')
    await page.getByLabel('Tenant').fill('platform')
    await page.getByRole('button', { name: 'Continue with Acme' }).waitFor({ state: 'detached' })
    t.equal(await page.getByRole('button', { name: 'Continue with Acme' }).count(), 0, 'none for platform')
    await page.getByLabel('Tenant').fill(tenant.code)
    await page.getByRole('button', { name: 'Continue with Acme' }).waitFor()
    t.same(await axeViolations(page), [], 'the sign-in page: no serious or critical axe violation')
    await page.getByRole('button', { name: 'Continue with Acme' }).click()
    await h1(page, 'Overview')
    t.equal(new URL(page.url()).hash, '', 'the login code is gone from the address')
    const users = await call(app, 'listUsers', adminCred, { query: { q: 'newcomer@acme.test' } })
    t.equal(users.data.items.length, 1, 'the provider created the newcomer’s account')
    await page.getByRole('link', { name: 'Account' }).click()
    await page.getByText('newcomer@acme.test', { exact: false }).first().waitFor()

    // An error of the flow: another person at the upstream with the admin's email, which is not linked.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await h1(page, 'Sign in')
    await nextPerson(context, upstream, { sub: 'stranger', email: admin.email, email_verified: true })
    await page.getByLabel('Tenant').fill(tenant.code)
    await page.getByRole('button', { name: 'Continue with Acme' }).click()
    await page
      .getByRole('alert')
      .filter({
        hasText: 'An account with this email already exists; sign in with it and link Acme from Account.',
      })
      .waitFor()
    t.equal(new URL(page.url()).hash, '', 'the error is gone from the address')
    t.same(
      await axeViolations(page),
      [],
      'the sign-in page with an error: no serious or critical axe violation',
    )

    // The provider's interaction page (section 23) offers it too: an application's sign-in through Acme.
    const app2 = await registerClient(app, tenant, {
      name: 'Invoices',
      firstParty: true,
      redirectUris: [APP_CB],
    })
    const config = await discover(base, tenant, app2.clientId, app2.clientSecret)
    const verifier = client.randomPKCECodeVerifier()
    const authorize = client.buildAuthorizationUrl(config, {
      redirect_uri: APP_CB,
      scope: 'openid email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'the-state',
    })
    const reached = new Promise<URL>((resolve) => {
      void page.route(`${APP_CB}**`, async (route) => {
        resolve(new URL(route.request().url()))
        await route.fulfill({ status: 200, contentType: 'text/plain', body: 'the application' })
      })
    })
    await nextPerson(context, upstream, {
      sub: 'newcomer',
      email: 'newcomer@acme.test',
      email_verified: true,
    })
    await page.goto(authorize.href)
    await h1(page, 'Sign in to Invoices')
    await page.getByRole('button', { name: 'Continue with Acme' }).click()
    const answer = await reached
    t.equal(answer.searchParams.get('state'), 'the-state', 'back at the application')
    const tokens = await client.authorizationCodeGrant(config, answer, {
      pkceCodeVerifier: verifier,
      expectedState: 'the-state',
    })
    t.equal(tokens.claims()?.email, 'newcomer@acme.test', 'signed in through Acme')

    // The administrator deletes it (asked first): the sign-in page no longer offers it.
    await page.unrouteAll()
    await page.goto(`${base}/console/settings/identity-providers`)
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await signIn(page, base, tenant.code, admin.email, PASSWORD, '/console/settings/identity-providers')
    await h1(page, 'Identity providers')
    await page.getByRole('button', { name: 'Delete Acme' }).click()
    await page.getByRole('button', { name: 'Delete it' }).click()
    await page.getByRole('status').filter({ hasText: 'Acme was deleted.' }).waitFor()
    await page.getByText('No identity provider yet', { exact: false }).waitFor()
    t.equal((await call(app, 'listIdentityProviders', adminCred)).data.total, 0, 'deleted')
    t.same(problems, [], 'no CSP violation or page error')
  },
)
