import { readFileSync } from 'node:fs'
import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'
import { base32Decode, totpAt } from '../helpers/totp.js'
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

// Recovery codes in a real Chromium (issue 44): shown once with Copy and Download when the second factor is
// turned on, and renewed on Account with a code (confirmMyOtp, renewMyRecoveryCodes): the former set is void.

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

t.setTimeout(300_000)
t.test(
  'renewMyRecoveryCodes, confirmMyOtp: recovery codes copied, downloaded, renewed',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { email: 'ana@acme.test', roles: ['user'] })
    const origin = await listen(app)
    const context = await launch(t)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    const { page, problems } = await openPage(context)
    await signIn(page, origin, tenant.code, user.email, PASSWORD)
    await h1(page, 'Overview')
    await page.getByRole('link', { name: 'Account' }).click()
    await h1(page, 'Account')

    // Turn the second factor on: the QR code's secret, then its current code.
    await page.getByRole('button', { name: 'Set up an authenticator' }).click()
    const secret = await page.locator('p', { hasText: 'Or enter this secret' }).locator('code').innerText()
    await page.getByLabel('Code', { exact: true }).fill(totpAt(base32Decode(secret), Date.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    const list = page.getByRole('list', { name: 'Recovery codes' })
    await list.waitFor()
    const first = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim())
    t.equal(first.length, 10, 'ten codes')
    await page.getByText('10 recovery codes left.').waitFor()

    // Copy and Download give the same codes.
    await page.getByRole('button', { name: 'Copy the codes' }).click()
    await page.getByText('Copied.').waitFor()
    t.same(
      (await page.evaluate(() => navigator.clipboard.readText())).split('\n'),
      first,
      'copied, one per line',
    )
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the codes' }).click(),
    ])
    t.equal(download.suggestedFilename(), `recovery-codes-${tenant.code}.txt`)
    const file = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\n')
    t.match(file[0] ?? '', /recovery codes/)
    t.same(file.slice(1), first, 'the file holds the codes')
    await page.waitForLoadState('networkidle')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      t.same(
        await axeViolations(page),
        [],
        `recovery codes at ${width} px: no serious or critical axe violation`,
      )
      await screenshot(page, 'recovery-codes')
    }
    await page.setViewportSize({ width: 1440, height: 900 })

    // Renew with one of them: a new set, and the former one is void (one of it no longer renews).
    await page.getByLabel('Code for new recovery codes').fill(first[0] ?? '')
    await page.getByRole('button', { name: 'Renew the recovery codes' }).click()
    await page.waitForFunction((old) => {
      const shown = [...document.querySelectorAll('[aria-label="Recovery codes"] li')].map((li) =>
        li.textContent?.trim(),
      )
      return shown.length === 10 && !shown.includes(old)
    }, first[1] ?? '')
    const second = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim())
    t.equal(second.filter((c) => first.includes(c)).length, 0, 'a whole new set')
    await page.getByLabel('Code for new recovery codes').fill(first[1] ?? '')
    await page.getByRole('button', { name: 'Renew the recovery codes' }).click()
    await page.getByRole('alert').waitFor()
    t.same(problems, [])
  },
)
