import t from 'tap'
import type { CDPSession, Page } from 'playwright-core'
import { auditRows, createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'
import { client, discover, listeningApp, registerClient, type FlowChecks } from '../helpers/oidc.js'
import { axeViolations, buildConsole, launch, NO_BROWSER, openPage, screenshot, signIn } from './browser.js'

// The provider's sign-in and consent page (contract section 23) in a real Chromium: an application's
// authorization request lands on the console's sign-in for that tenant, the person signs in (a password, or a
// passkey), consents in words, and the browser reaches the client's redirect URI with a code that
// openid-client exchanges. The callback is answered inside the browser (page.route): nothing leaves loopback.

const CALLBACK = 'http://127.0.0.1:9/cb'

/** An authorization request as openid-client builds it, with the checks the client keeps. */
async function authorizationUrl(config: client.Configuration, params: Record<string, string> = {}) {
  const checks: FlowChecks = {
    verifier: client.randomPKCECodeVerifier(),
    state: client.randomState(),
    nonce: client.randomNonce(),
  }
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
    state: checks.state,
    nonce: checks.nonce,
    ...params,
  })
  return { url, checks }
}

/** The client's code exchange, with the checks it kept for that request. */
function exchange(config: client.Configuration, checks: FlowChecks, callback: URL) {
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
  })
}

/**
 * Answers the client's redirect URI in the browser; resolves with the first address that reached it (20 s at
 * most), once the page has landed there (so that the next navigation does not interrupt it).
 */
async function callbackReached(page: Page): Promise<URL> {
  const url = await routedCallback(page)
  await page.waitForURL(`${CALLBACK}**`)
  return url
}

function routedCallback(page: Page): Promise<URL> {
  return new Promise((resolve, reject) => {
    const late = setTimeout(
      () => reject(new Error(`no request reached ${CALLBACK}; at ${page.url()}`)),
      20_000,
    )
    void page.route(`${CALLBACK}**`, async (route) => {
      clearTimeout(late)
      resolve(new URL(route.request().url()))
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'the application' })
    })
  })
}

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

// Why more than .taprc's 120 s: a real browser on a shared 2-core machine; each step still waits at most 20 s.
t.setTimeout(300_000)

t.test(
  'getInteractionPage in Chromium: a password sign-in, consent denied then allowed, the code exchanged',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const { app, base } = await listeningApp(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const registered = await registerClient(app, tenant, {
      name: 'Invoices',
      logoUri: `${base}/console/favicon.svg`,
      clientUri: 'https://invoices.example',
      redirectUris: [CALLBACK],
    })
    const config = await discover(base, tenant, registered.clientId, registered.clientSecret)
    const context = await launch(t)
    const { page, problems } = await openPage(context)

    // The first request: the sign-in page of the tenant, the hint filled in; then the consent, denied.
    const first = await authorizationUrl(config, { login_hint: user.email })
    let reached = callbackReached(page)
    await page.goto(first.url.href)
    await h1(page, 'Sign in to Invoices')
    t.equal(await page.getByLabel('Tenant').inputValue(), tenant.code, 'the tenant of the issuer')
    t.equal(await page.getByLabel('Tenant').getAttribute('readonly'), '', 'and not to be changed')
    t.equal(await page.getByLabel('Email, username or CPF/CNPJ').inputValue(), user.email, 'login_hint')
    t.same(await axeViolations(page), [], 'the sign-in page: no serious or critical axe violation')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await h1(page, 'Invoices asks for access to your account')
    const asked = page.getByRole('listitem')
    await asked.filter({ hasText: 'See your email address and whether it is verified' }).waitFor()
    await asked.filter({ hasText: 'Know who you are' }).waitFor()
    t.equal(await page.getByRole('link', { name: 'invoices.example' }).count(), 1, 'the client’s URI')
    t.equal(await page.locator('img.client-logo').getAttribute('src'), `${base}/console/favicon.svg`, 'logo')
    t.same(await axeViolations(page), [], 'the consent page: no serious or critical axe violation')
    if (process.env.SCREENSHOTS) await screenshot(page, 'interaction-consent')
    await page.getByRole('button', { name: 'Deny' }).click()
    const denied = await reached
    t.equal(denied.searchParams.get('error'), 'access_denied', 'Deny: access_denied at the client')
    t.equal(denied.searchParams.get('state'), first.checks.state)

    // The second request of the same browser: the provider session is there, so only the consent is asked,
    // by the session this tab kept; Allow gives a code that the client exchanges.
    await page.unrouteAll()
    reached = callbackReached(page)
    const second = await authorizationUrl(config)
    await page.goto(second.url.href)
    await h1(page, 'Invoices asks for access to your account')
    await page.getByRole('button', { name: 'Allow' }).click()
    const callback = await reached
    t.equal(callback.searchParams.get('iss'), `${base}/t/${tenant.code}`, 'iss in the authorization response')
    const tokens = await exchange(config, second.checks, callback)
    t.equal(tokens.claims()?.sub, user.id, 'the ID token names the user who signed in')
    t.equal(tokens.claims()?.email, user.email)
    t.same(tokens.claims()?.amr, ['pwd'], 'signed in with a password')
    const consents = await auditRows(app, tenant.id, 'OAUTH_CONSENT')
    t.match(consents, [{ success: false, error_message: 'access_denied' }, { success: true }], 'both answers')

    // An interaction that is over: the page says so, in words.
    await page.goto(`${base}/t/${tenant.code}/interaction/finished-one`)
    await h1(page, 'This sign-in has ended')
    t.same(problems, [], 'no CSP violation, page error or console error')
  },
)

/** Chromium's virtual authenticator: a platform one with discoverable credentials and user verification. */
async function virtualAuthenticator(cdp: CDPSession): Promise<void> {
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })
}

t.test(
  'getInteractionPage in Chromium: a passkey sign-in for a first-party client, no consent asked; Cancel',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    // WebAuthn needs a domain: the issuer, and the page, are at localhost, the tenant's rpId.
    const { app, base: origin } = await listeningApp(t, {}, 'localhost')
    const tenant = await createTenant(app, {
      webauthn: { rpId: 'localhost', origins: [origin] },
      rateLimits: { requestsPerMinute: null, loginPerMinute: 20 },
    })
    const user = await createUser(app, tenant, { roles: ['user'] })
    const registered = await registerClient(app, tenant, {
      name: 'Dashboard',
      firstParty: true,
      redirectUris: [CALLBACK],
    })
    const config = await discover(origin, tenant, registered.clientId, registered.clientSecret)
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    const cdp = await context.newCDPSession(page)
    await virtualAuthenticator(cdp)

    // The person has a passkey (added on Account, as section 21's console does), then signs out.
    await signIn(page, origin, tenant.code, user.email, PASSWORD)
    await h1(page, 'Overview')
    await page.getByRole('link', { name: 'Account' }).click()
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.getByRole('region', { name: 'Passkeys' }).getByRole('listitem').first().waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await h1(page, 'Sign in')

    // Cancel: the client hears access_denied.
    let reached = callbackReached(page)
    const cancelled = await authorizationUrl(config)
    await page.goto(cancelled.url.href)
    await h1(page, 'Sign in to Dashboard')
    await page.getByRole('button', { name: 'Cancel and return to Dashboard' }).click()
    t.equal((await reached).searchParams.get('error'), 'access_denied', 'Cancel: access_denied')

    // The passkey signs in, and a first-party client asks no consent: the code comes back at once.
    await page.unrouteAll()
    reached = callbackReached(page)
    const flow = await authorizationUrl(config)
    await page.goto(flow.url.href)
    await h1(page, 'Sign in to Dashboard')
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    const callback = await reached
    const tokens = await exchange(config, flow.checks, callback)
    t.equal(tokens.claims()?.sub, user.id, 'the passkey’s user')
    t.same(tokens.claims()?.amr, ['hwk', 'user', 'mfa'], 'amr: a passkey with user verification')
    t.same(problems, [], 'no CSP violation, page error or console error')
  },
)
