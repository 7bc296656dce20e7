import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import type { Test } from 'tap'
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core'
import type { TestApp } from '../helpers/app.js'

// What the browser tests share (the console's, the sign-up example's): Debian's Chromium (as test/system/explorer-browser.test.ts
// finds and starts it), the built console, axe-core and screenshots.

const ROOT = resolve(import.meta.dirname, '../..')

/** CHROMIUM_PATH, else `chromium` on the PATH (.ci/run hides it through the PATH on its fresh-machine step). */
function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean)
  return dirs.map((dir) => join(dir, 'chromium')).find((file) => existsSync(file))
}
const CHROMIUM = findChromium()

/** False, or why the browser tests are skipped (printed by tap). */
export const NO_BROWSER =
  CHROMIUM && existsSync(CHROMIUM)
    ? false
    : `no Chromium at ${CHROMIUM ?? '`chromium` on the PATH'} (apt-get install -y chromium, or set ` +
      'CHROMIUM_PATH): this page was not checked in a browser'

/** Builds the console when its output is missing or stale (the same script `npm start` runs). */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-console.mjs')], { stdio: 'inherit' })
}

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

/**
 * Chromium on a fresh profile, closed in teardown. Downloads are accepted (the CSV export). `locale`: the
 * browser's language (navigator.languages, Accept-Language); Chromium's own otherwise, English here.
 */
export async function launch(t: Test, width = 1440, locale?: string): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'tessera-console-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: locale ? [...ARGS, `--lang=${locale}`] : ARGS,
    ...(locale ? { locale } : {}),
    timeout: 60_000,
    acceptDownloads: true,
    viewport: { width, height: 900 },
  })
  t.teardown(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return context
}

export async function listen(app: TestApp): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('no TCP address')
  return `http://127.0.0.1:${address.port}`
}

/** The service on a loopback port, as the origin the browser opens: localhost, which WebAuthn accepts. */
export async function localOrigin(app: TestApp): Promise<string> {
  return (await listen(app)).replace('//127.0.0.1:', '//localhost:')
}

/** Chromium's virtual authenticator on the page: a platform one with discoverable credentials and UV. */
export async function virtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })
  return authenticatorId
}

/** A page that records CSP violations, page errors and console errors, for the test to assert none. */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = context.pages()[0] ?? (await context.newPage())
  page.setDefaultTimeout(20_000)
  const problems: string[] = []
  await page.exposeFunction('__cspViolation', (v: string) => problems.push(`CSP: ${v}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __cspViolation: (v: string) => void }).__cspViolation
      void report(`${e.effectiveDirective} blocked ${e.blockedURI}`)
    })
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  return { page, problems }
}

/** Signs in through the form, by its labels, after opening `path` (a screen that sends a signed-out reader to the sign-in). */
export async function signIn(
  page: Page,
  origin: string,
  tenant: string,
  identifier: string,
  password: string,
  path = '/console',
) {
  await page.goto(`${origin}${path}`)
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
  await page.getByLabel('Tenant').fill(tenant)
  await page.getByLabel('Email, username or CPF/CNPJ').fill(identifier)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Why evaluate and not a script tag: the console's CSP refuses inline scripts, as it should.
  await page.evaluate(AXE)
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>
        }
      }
    ).axe
    const result = await axe.run(document)
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
  })
}

export const SCREENSHOTS = resolve(ROOT, '.tap/screenshots')

/** A full-page screenshot into .tap/screenshots/console-<name>-<width>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `console-${name}-${page.viewportSize()?.width ?? 0}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** axe-core at 375 and 1440 px on the page as it is, a screenshot at each; the page left at 1440 px. */
export async function axeAtBothWidths(t: Test, page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle')
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 })
    t.same(await axeViolations(page), [], `${name} at ${width} px: no serious or critical axe violation`)
    await screenshot(page, name)
  }
  await page.setViewportSize({ width: 1440, height: 900 })
}
