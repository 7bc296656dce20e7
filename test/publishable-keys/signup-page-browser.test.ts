import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildTestApp } from '../helpers/app.js'
import { serveSignupSite } from '../helpers/signup-site.js'
import { launch, listen, NO_BROWSER } from '../console/browser.js'
import { call } from '../helpers/call.js'
import { createTenant, userWithToken } from '../helpers/fixtures.js'

// examples/signup-page in a real (headless) Chromium: the page is served from a second loopback port
// (another origin than the service), its ALTCHA widget solves the service's challenge at the default
// difficulty, and the form signs a user up through POST /signup with the CORS of the key's origin.

const ROOT = resolve(import.meta.dirname, '../..')
const PAGE = join(ROOT, 'examples/signup-page/index.html')

/** The example folder as a static site: index.html with its placeholders filled, and the widget's script. */
function serveExample(t: Test, tessera: string, key: () => string): Promise<string> {
  return serveSignupSite(t, () =>
    readFileSync(PAGE, 'utf8')
      .replaceAll('__TESSERA_URL__', tessera)
      .replaceAll('__PUBLISHABLE_KEY__', key()),
  )
}

t.test('signup: the example page signs a user up in Chromium', { skip: NO_BROWSER }, async (t) => {
  // Why longer than tap's 120 s: a browser start, a service and nine solves at the default difficulty.
  t.setTimeout(300_000)
  // The default difficulty (SIGNUP_CHALLENGE_MAX_NUMBER unset), as a visitor's browser meets it.
  const app = await buildTestApp(t)
  const tessera = await listen(app)
  let value = ''
  const site = await serveExample(t, tessera, () => value)
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const created = await call(app, 'createPublishableKey', admin.cred, {
    body: { name: 'Example page', allowedOrigins: [site], defaultRoles: ['user'] },
  })
  t.equal(created.status, 201)
  value = created.data.key

  const context = await launch(t)
  const page = await context.newPage()
  const failures: string[] = []
  page.on('pageerror', (e) => failures.push(e.message))
  page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText ?? ''}`))
  page.on('console', (m) => {
    if (m.type() === 'error') failures.push(`console: ${m.text()}`)
  })
  await page.goto(`${site}/`)
  await page.fill('input[name=email]', 'browser@example.test')
  await page.fill('input[name=password]', 'Browser-signup-1')

  // Solve once by a click, as a visitor does, and time it.
  const firstMs = await page.evaluate(async () => {
    const widget = document.getElementById('pow') as HTMLElement
    const done = new Promise<void>((r) =>
      widget.addEventListener('statechange', (e) => {
        const state = (e as CustomEvent<{ state: string }>).detail.state
        if (state === 'verified' || state === 'error') r()
      }),
    )
    const t0 = performance.now()
    widget.querySelector<HTMLInputElement>('input[type=checkbox]')?.click()
    await done
    return performance.now() - t0
  })
  t.same(failures, [], 'the widget fetched its challenge without an error')
  t.ok(firstMs > 0, `solved by a click in ${Math.round(firstMs)} ms`)
  t.ok(await page.inputValue('input[name=altcha]'), 'the widget put its payload in the form')

  await page.click('button[type=submit]')
  await page.waitForFunction(() => document.getElementById('result')?.textContent !== '', null, {
    timeout: 30_000,
  })
  t.equal(await page.textContent('#result'), 'Welcome, browser@example.test')
  t.same(failures, [], 'no page error, no failed request')
  const users = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('users')
    .select(['email', 'email_verified'])
    .where('tenant_id', '=', tenant.id)
    .where('email', '=', 'browser@example.test')
    .execute()
  t.same(users, [{ email: 'browser@example.test', email_verified: false }])

  // The time a browser needs for the default difficulty: more rounds of the widget, each a new challenge.
  const rounds = await page.evaluate(async () => {
    type Widget = HTMLElement & { reset(): void; verify(): Promise<void> }
    const widget = document.getElementById('pow') as Widget
    const out: number[] = []
    for (let i = 0; i < 8; i++) {
      widget.reset()
      const t0 = performance.now()
      await widget.verify()
      out.push(performance.now() - t0)
    }
    return out
  })
  const all = [firstMs, ...rounds].sort((a, b) => a - b)
  const mean = all.reduce((a, b) => a + b, 0) / all.length
  t.comment(
    `ALTCHA at the default difficulty (maxnumber 100000) in Chromium: mean ${Math.round(mean)} ms, ` +
      `median ${Math.round(all[Math.floor(all.length / 2)] ?? 0)} ms, max ${Math.round(all[all.length - 1] ?? 0)} ms over ${all.length} solves (fetch included)`,
  )
  t.ok(mean < 10_000, 'a visitor waits seconds at most')
})
