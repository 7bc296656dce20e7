import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { call } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD, tokenFor } from '../helpers/fixtures.js'
import { client, exchangeCode, listeningApp, signIn as signInFlow, startFlow } from '../helpers/oidc.js'
import { axeViolations, buildConsole, launch, NO_BROWSER, openPage, screenshot, signIn } from './browser.js'

// The OpenID provider's screens in a real Chromium (contract section 23, "Console"): an administrator
// creates an application (its secret shown once, with a copy button), reads its issuer, discovery URL and
// quick start, edits its redirect URIs and scopes, rotates its secret and deletes it; a person withdraws an
// application they authorized from Account. The quick start's own calls sign a person in, so what the page
// tells a developer to paste is checked to work.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()
const SECRET = /^[A-Za-z0-9_-]{43,}$/
const CALLBACK = 'https://billing.acme.test/callback'
const SIGNED_IN = 'https://billing.acme.test/signed-in'

async function shots(t: Test, page: Page, name: string) {
  await page.waitForLoadState('networkidle')
  t.same(await axeViolations(page), [], `${name}: no serious or critical axe violation`)
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 })
    await screenshot(page, name)
  }
}

/** openid-client's configuration as the quick start builds it: the client authenticates as it registered. */
function quickStartConfig(issuer: string, clientId: string, secret: string) {
  return client.discovery(new URL(issuer), clientId, undefined, client.ClientSecretBasic(secret), {
    execute: [client.allowInsecureRequests],
  })
}

/** Whether the provider takes this secret: an introspection answers only a client that authenticated. */
async function secretWorks(issuer: string, clientId: string, secret: string): Promise<boolean> {
  const config = await quickStartConfig(issuer, clientId, secret)
  return client.tokenIntrospection(config, 'not-a-token').then(
    (r) => r.active === false,
    () => false,
  )
}

t.setTimeout(300_000)
t.test(
  'console in Chromium: applications, their quick start, and a person’s authorized applications',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    // Why PUBLIC_URL: the issuer the page shows is the service's own address, and openid-client checks it.
    const { app, base } = await listeningApp(t)
    // Why passkeys on: without auth_config.webauthn, Account's passkey list is answered 409 PASSKEYS_DISABLED
    // (shown as a fact), and Chromium logs every 4xx as a console error, which this test counts.
    const tenant = await createTenant(app, { webauthn: { rpId: 'localhost', origins: ['http://localhost'] } })
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    const person = await createUser(app, tenant, { email: 'person@acme.test', roles: ['user'] })
    const adminCred = { token: await tokenFor(app, admin) }
    const issuer = `${base}/t/${tenant.code}`
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`)
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await signIn(page, base, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    // Account before any sign-in elsewhere: the empty state.
    await page.goto(`${base}/console/account`)
    await h1(page, 'Account')
    const apps = page.getByRole('region', { name: 'Authorized applications' })
    await apps.getByText('No application is authorized.').waitFor()

    // The menu leads to the screen; nothing registered yet.
    await page
      .getByRole('navigation', { name: 'Screens' })
      .getByRole('link', { name: 'Applications' })
      .click()
    await h1(page, 'Applications')
    await page.getByText('No application yet.').waitFor()
    await shots(t, page, 'applications-empty')

    // Create a confidential client: its secret is shown once, with a copy button.
    await page.getByRole('button', { name: 'Create application' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Billing portal')
    t.ok(await page.getByRole('radio', { name: /^Confidential/ }).isChecked(), 'confidential by default')
    await page.getByRole('textbox', { name: /^Redirect URIs/ }).fill(CALLBACK)
    t.ok(await page.getByRole('checkbox', { name: 'openid', exact: true }).isChecked(), 'openid offered')
    await shots(t, page, 'applications-create')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    const secret = await page.getByLabel('Client secret').inputValue()
    t.match(secret, SECRET, 'the secret is shown')
    await page.getByRole('button', { name: 'Copy', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor()
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the secret is copied')
    await shots(t, page, 'applications-secret')
    const listed = await call(app, 'listOAuthClients', adminCred)
    t.equal(listed.data.total, 1, 'one client')
    const created = listed.data.items[0]!
    t.match(created, { name: 'Billing portal', type: 'confidential', redirectUris: [CALLBACK] })
    t.ok(await secretWorks(issuer, created.clientId, secret), 'the secret shown is the client’s')

    // Its page: the secret gone, the issuer, the discovery URL and the quick start with its id.
    await page.getByRole('button', { name: 'I have stored it' }).click()
    await h1(page, 'Application Billing portal')
    t.equal(new URL(page.url()).pathname, `/console/applications/${created.id}`, 'its own URL')
    t.notOk((await page.content()).includes(secret), 'the secret is gone from the page')
    const discoveryUrl = `${issuer}/.well-known/openid-configuration`
    await page.getByText(issuer, { exact: true }).waitFor()
    await page.getByText(discoveryUrl, { exact: true }).waitFor()
    const discovered = (await (await fetch(discoveryUrl)).json()) as { issuer: string }
    t.equal(discovered.issuer, issuer, 'the discovery URL shown is the provider’s')
    const quickStart = page.getByRole('region', { name: 'Code of the quick start' })
    const code = await quickStart.innerText()
    for (const part of [
      `'${created.clientId}'`,
      `redirect_uri: '${CALLBACK}'`,
      `new URL('${issuer}')`,
      'client.discovery(',
      'client.ClientSecretBasic(secret)',
      'client.buildAuthorizationUrl(',
      "code_challenge_method: 'S256'",
      'client.authorizationCodeGrant(',
    ]) {
      t.ok(code.includes(part), `the quick start holds ${part}`)
    }
    await shots(t, page, 'application')

    // The quick start's configuration and calls sign the person in (the grant Account lists below).
    const config = await quickStartConfig(issuer, created.clientId, secret)
    const flow = await startFlow(base, config, {
      redirect_uri: CALLBACK,
      scope: 'openid profile email offline_access',
    })
    const tokens = await exchangeCode(config, flow, await signInFlow(app, flow, person))
    t.equal(tokens.claims()?.sub, person.id, 'the person is signed in to the application')
    t.ok(tokens.refresh_token, 'with a refresh token')

    // Edit: a new first redirect URI and one more scope; the quick start follows.
    await page.getByRole('textbox', { name: /^Redirect URIs/ }).fill(`${SIGNED_IN}\n${CALLBACK}`)
    await page.getByRole('checkbox', { name: 'roles', exact: true }).check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    const edited = (await call(app, 'getOAuthClient', adminCred, { params: { id: created.id } })).data
    t.same(edited.redirectUris, [SIGNED_IN, CALLBACK], 'redirect URIs stored, in order')
    t.same(edited.scopes.sort(), ['email', 'offline_access', 'openid', 'profile', 'roles'], 'roles added')
    await quickStart.getByText(`redirect_uri: '${SIGNED_IN}'`).waitFor()
    t.ok((await quickStart.innerText()).includes('roles'), 'the quick start asks for the new scope')

    // Rotate: asks first; the new secret is shown once; the old one stops at once.
    await page.getByRole('button', { name: 'Rotate the secret of Billing portal' }).click()
    await page.getByRole('group', { name: 'Rotate the secret of Billing portal' }).waitFor()
    t.same(await axeViolations(page), [], 'the rotate confirmation: no serious or critical axe violation')
    await page.getByRole('button', { name: 'Rotate now' }).click()
    const rotated = await page.getByLabel('Client secret').inputValue()
    t.match(rotated, SECRET, 'a new secret is shown')
    t.not(rotated, secret, 'and it is new')
    await shots(t, page, 'application-rotated')
    await page.getByRole('button', { name: 'I have stored it' }).click()
    t.notOk((await page.content()).includes(rotated), 'the new secret is gone from the page')
    t.ok(await secretWorks(issuer, created.clientId, rotated), 'the new secret works')
    t.notOk(await secretWorks(issuer, created.clientId, secret), 'the old one no longer does')

    // The person: Account lists the application with its scopes, and "Revoke" withdraws it.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await signIn(page, base, tenant.code, person.email, PASSWORD)
    await h1(page, 'Overview')
    t.equal(
      await page
        .getByRole('navigation', { name: 'Screens' })
        .getByRole('link', { name: 'Applications' })
        .count(),
      0,
      'no Applications screen without oauth-clients:read',
    )
    await page.goto(`${base}/console/account`)
    await h1(page, 'Account')
    const entry = apps.getByRole('listitem').filter({ hasText: 'Billing portal' })
    await entry.waitFor()
    const text = await entry.innerText()
    for (const scope of ['openid', 'email', 'offline_access']) t.ok(text.includes(scope), `shows ${scope}`)
    t.match(text, /authorized \S/, 'and when')
    await shots(t, page, 'account-applications')
    await apps.getByRole('button', { name: 'Revoke Billing portal' }).click()
    await apps.getByText('No application is authorized.').waitFor()
    const mine = await call(app, 'listMyOAuthGrants', { token: await tokenFor(app, person) })
    t.same(mine.data.items, [], 'the API lists no grant')
    // Why a new configuration: the one the grant was made with holds the secret rotated above.
    const now = await quickStartConfig(issuer, created.clientId, rotated)
    const refused = await client.refreshTokenGrant(now, tokens.refresh_token ?? '').then(
      () => 'refreshed',
      (e: { error?: string }) => e.error,
    )
    t.equal(refused, 'invalid_grant', 'its refresh token is refused')

    // The administrator deletes the application, after a confirming click.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await signIn(page, base, tenant.code, admin.email, PASSWORD, `/console/applications/${created.id}`)
    await h1(page, 'Application Billing portal')
    await page.getByRole('button', { name: 'Delete Billing portal' }).click()
    await page.getByRole('group', { name: 'Delete Billing portal' }).waitFor()
    t.same(await axeViolations(page), [], 'the delete confirmation: no serious or critical axe violation')
    await page.getByRole('button', { name: 'Delete now' }).click()
    await h1(page, 'Applications')
    await page.getByText('No application yet.').waitFor()
    const gone = await call(app, 'getOAuthClient', adminCred, { params: { id: created.id } })
    t.equal(gone.code, 'OAUTH_CLIENT_NOT_FOUND', 'deleted')

    // A public client: no secret to show or rotate, so its page follows at once, its quick start with None().
    await page.getByRole('button', { name: 'Create application' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Mobile app')
    await page.getByRole('radio', { name: /^Public/ }).check()
    t.equal(
      await page.getByRole('checkbox', { name: 'client_credentials' }).count(),
      0,
      'no client_credentials',
    )
    t.equal(await page.getByLabel('Client authentication').count(), 0, 'no secret method')
    await page.getByRole('textbox', { name: /^Redirect URIs/ }).fill('com.acme.app:/callback')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await h1(page, 'Application Mobile app')
    t.equal(await page.getByLabel('Client secret').count(), 0, 'no secret shown')
    const mobile = page.getByRole('region', { name: 'Code of the quick start' })
    await mobile.getByText('client.None()').waitFor()
    t.notOk((await mobile.innerText()).includes('TESSERA_CLIENT_SECRET'), 'no secret in its quick start')
    t.equal(await page.getByRole('button', { name: /^Rotate the secret/ }).count(), 0, 'nothing to rotate')
    const publicOne = (await call(app, 'listOAuthClients', adminCred)).data.items[0]
    t.match(publicOne, { name: 'Mobile app', type: 'public', tokenEndpointAuthMethod: 'none' })

    t.same(problems, [], 'no CSP violation, page error or console error')
  },
)
