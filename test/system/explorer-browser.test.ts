import t, { type Test } from 'tap'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { networkInterfaces, tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { call, callRaw } from '../helpers/call.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { helmetHeaders } from '../../src/plugins/security-headers.js'

// The /docs explorer as a person uses it, in a real (headless) Chromium: Authorize, reload, Try it out.

/**
 * CHROMIUM_PATH, else `chromium` on the PATH (Debian's package; .ci/run installs it when missing). Why the
 * PATH and not a fixed /usr/bin/chromium: .ci/run's fresh-machine step hides it through the PATH.
 */
function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean)
  return dirs.map((dir) => join(dir, 'chromium')).find((file) => existsSync(file))
}
const CHROMIUM = findChromium()
const NO_BROWSER =
  CHROMIUM && existsSync(CHROMIUM)
    ? false
    : `no Chromium at ${CHROMIUM ?? '`chromium` on the PATH'} (apt-get install -y chromium, or set ` +
      'CHROMIUM_PATH): the explorer was not checked in a browser'

/** Screenshots: under .tap/ (gitignored, not cleaned by tap), kept after the run for a person to look at. */
const SCREENSHOTS = resolve(import.meta.dirname, '../../.tap/screenshots')

// Why the background-networking flags: this machine's network is closed, and Chromium's own
// connections (component updates, sync, QUIC probes) are refused, which slows or breaks its start.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Chromium on a fresh profile (launchPersistentContext passes it as --user-data-dir), closed in teardown. */
async function launch(t: Test): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: 60_000,
  })
  t.teardown(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return context
}

async function listen(app: TestApp, host: string): Promise<string> {
  await app.listen({ port: 0, host })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('no TCP address')
  return `http://${host}:${address.port}`
}

interface Problems {
  /** CSP violations, uncaught page errors and failed requests. */
  broken: string[]
  /** console.error lines. */
  consoleErrors: string[]
}

/** Records what went wrong in the page, to assert nothing did. */
async function watch(page: Page): Promise<Problems> {
  const problems: Problems = { broken: [], consoleErrors: [] }
  await page.exposeFunction('__cspViolation', (v: string) => problems.broken.push(`CSP: ${v}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __cspViolation: (v: string) => void }).__cspViolation
      void report(`${e.effectiveDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`)
    })
  })
  page.on('console', (m) => {
    if (m.type() === 'error') problems.consoleErrors.push(m.text())
  })
  page.on('pageerror', (e) => problems.broken.push(`page error: ${e.message}`))
  page.on('requestfailed', (r) => problems.broken.push(`failed: ${r.url()} ${r.failure()?.errorText}`))
  return problems
}

/** Opens the explorer and waits for swagger-ui to have rendered the document's operations (the first one). */
async function openExplorer(page: Page, origin: string): Promise<void> {
  const res = await page.goto(`${origin}/docs`, { waitUntil: 'load' })
  if (res?.status() !== 200) throw new Error(`/docs answered ${res?.status()}`)
  await page.locator('#operations-Authentication-login').waitFor()
}

/**
 * Scrolls until the operation's block is rendered, and to it. Why: swagger-ui virtualizes the operation list
 * once it holds 150 rows (tags and operations, as the document now does), so a block far down the page exists
 * only once it is scrolled into view.
 */
async function reveal(page: Page, operation: string): Promise<void> {
  const op = page.locator(`#${operation}`)
  await page.evaluate(() => window.scrollTo(0, 0))
  for (let i = 0; i < 200 && (await op.count()) === 0; i++) await page.mouse.wheel(0, 600)
  await op.scrollIntoViewIfNeeded()
}

/** Expands an operation, turns "Try it out" on (unless already on), clicks Execute; returns the block. */
async function execute(page: Page, operation: string, url: string) {
  await reveal(page, operation)
  const op = page.locator(`#${operation}`)
  await op.locator('.opblock-summary-control').click()
  const tryIt = op.locator('button.try-out__btn')
  if ((await tryIt.innerText()).trim() === 'Try it out') await tryIt.click()
  const answered = page.waitForResponse((r) => r.url() === url)
  await op.locator('button.execute').click()
  const response = await answered
  const live = op.locator('.live-responses-table')
  await live.locator('tr.response .response-col_status').first().waitFor()
  return { op, live, response }
}

/** The page from its top bar (and Authorize state) down to the end of `until` (the live response). */
async function screenshot(page: Page, until: Locator, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, name)
  const bottom = await until.evaluate((e) => e.getBoundingClientRect().bottom + window.scrollY)
  const width = page.viewportSize()?.width ?? 1280
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width, height: Math.ceil(bottom) + 20 } })
  return path
}

/** An IPv4 address of this machine other than loopback, if it has one. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  }
  return undefined
}

t.test('explorer page: the service’s name, a relative server, its own CSP on /docs only', async (t) => {
  const app = await buildTestApp(t)
  const helmetCsp = helmetHeaders()['content-security-policy']
  const api = await call(app, 'getHealth')
  t.equal(api.headers['content-security-policy'], helmetCsp, '/api keeps helmet’s policy, unchanged')
  t.match(helmetCsp, /upgrade-insecure-requests/, '(which upgrades insecure requests)')
  for (const url of ['/docs/', '/docs/static/swagger-initializer.js', '/docs/static/theme/tessera.js']) {
    const res = await callRaw(app, 'GET', url)
    t.equal(res.status, 200, url)
    const csp = String(res.headers['content-security-policy'])
    t.match(csp, /default-src 'self'/, `${url}: same-origin by default`)
    t.match(csp, /script-src 'self'/, `${url}: same-origin scripts`)
    t.notMatch(csp, /unsafe-eval|unsafe-inline/, `${url}: no inline or eval`)
    t.match(csp, /object-src 'none'/, `${url}: no plugins`)
    t.match(csp, /frame-ancestors 'self'/, `${url}: not framed by other sites`)
    t.notMatch(csp, /upgrade-insecure-requests/, `${url}: works over plain HTTP on any host`)
  }
  const html = await callRaw(app, 'GET', '/docs/')
  t.match(html.raw, '<title>Tessera API explorer</title>', 'the page carries the service’s name')
  t.notMatch(html.raw, /Swagger UI/, 'not the framework’s')
  const doc = (await callRaw(app, 'GET', '/docs/json')).body
  t.same(
    doc.servers.map((s: { url: string }) => s.url),
    ['/'],
    'the document’s server is relative',
  )
  t.ok(doc.components.securitySchemes.bearerAuth, 'bearer JWT scheme in the document')
  t.ok(doc.components.securitySchemes.clientKey, 'Client Key scheme in the document')
})

t.test(
  'explorer in Chromium: Authorize with a token, reload keeps it, Try it out GET /api/v1/me shows 200',
  { skip: NO_BROWSER },
  async (t) => {
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const token = await tokenFor(app, user)
    const origin = await listen(app, '127.0.0.1')

    const context = await launch(t)
    const page = context.pages()[0] ?? (await context.newPage())
    page.setDefaultTimeout(20_000)
    const problems = await watch(page)

    await openExplorer(page, origin)
    t.equal(await page.title(), 'Tessera API explorer', 'title: the service’s name')
    const logo = page.locator('header.tessera-topbar img')
    t.equal(await logo.getAttribute('alt'), 'Tessera API explorer', 'top bar: Tessera’s logo')
    t.ok(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'logo drawn')
    t.equal(await page.locator('.swagger-ui .topbar').count(), 0, 'no Swagger top bar, logo or Explore box')

    // Authorize: both credential schemes are offered.
    await page.locator('.scheme-container button.authorize').click()
    const dialog = page.locator('.dialog-ux .modal-ux')
    const schemes = (await dialog.locator('.auth-container h4 code').allInnerTexts()).map((s) => s.trim())
    t.ok(schemes.includes('bearerAuth'), `bearer JWT offered (offered: ${schemes.join(', ')})`)
    t.ok(schemes.includes('clientKey'), 'Client Key offered')
    const bearer = dialog
      .locator('.auth-container')
      .filter({ has: page.locator('h4 code', { hasText: /^bearerAuth$/ }) })
    await bearer.locator('input').fill(token)
    await bearer.locator('button.modal-btn.authorize').click()
    await bearer.locator('button', { hasText: 'Logout' }).waitFor()
    await bearer.locator('button.btn-done').click()
    await page.locator('.scheme-container button.authorize.locked').waitFor()
    t.pass('authorized with the access token')

    // Reload: the authorization is still there (persistAuthorization keeps it in localStorage).
    await page.reload({ waitUntil: 'load' })
    await page.locator('#operations-Authentication-login').waitFor()
    await page.locator('.scheme-container button.authorize.locked').waitFor()
    t.pass('still authorized after a reload')
    const stored = await page.evaluate(() => localStorage.getItem('authorized'))
    t.match(stored, token, 'the token is what was kept')

    // Try it out → Execute on GET /api/v1/me.
    const { op, live, response } = await execute(
      page,
      'operations-Authentication-getMe',
      `${origin}/api/v1/me`,
    )
    t.equal(response.status(), 200, 'the browser called the serving origin and got 200')
    t.equal(await response.request().headerValue('authorization'), `Bearer ${token}`, 'with the token')
    t.equal(
      (await live.locator('tr.response .response-col_status').first().innerText()).trim(),
      '200',
      'the page shows 200',
    )
    t.match(await op.locator('.request-url').innerText(), `${origin}/api/v1/me`, 'and the URL it called')
    t.match(
      await live.locator('tr.response .response-col_description').first().innerText(),
      user.email,
      'and the body',
    )

    const shot = await screenshot(page, live, 'explorer-me-200.png')
    t.ok(existsSync(shot), `screenshot: ${shot}`)

    t.same(problems.broken, [], 'no CSP violation, page error or failed request')
    t.same(problems.consoleErrors, [], 'no console error')
  },
)

const LAN = lanAddress()
t.test(
  'explorer over plain HTTP on a non-loopback address: assets load, Try it out calls that origin',
  { skip: NO_BROWSER || (LAN ? false : 'this machine has no non-loopback IPv4 address') },
  async (t) => {
    const app = await buildTestApp(t)
    const origin = await listen(app, LAN as string)
    const context = await launch(t)
    const page = context.pages()[0] ?? (await context.newPage())
    page.setDefaultTimeout(20_000)
    const problems = await watch(page)

    await openExplorer(page, origin)
    t.pass(`the explorer rendered at ${origin}/docs`)
    const { live, response } = await execute(page, 'operations-System-getHealth', `${origin}/api/v1/health`)
    t.equal(response.status(), 200, 'Try it out called this origin')
    t.equal(
      (await live.locator('tr.response .response-col_status').first().innerText()).trim(),
      '200',
      'the page shows 200',
    )
    await screenshot(page, live, 'explorer-lan-health-200.png')
    // Console errors are not checked here: Chromium reports helmet's Cross-Origin-Opener-Policy as
    // ignored on an untrustworthy (plain HTTP, non-localhost) origin, which is expected.
    t.same(problems.broken, [], 'no CSP violation (nothing upgraded to HTTPS), page error or failed request')
  },
)
