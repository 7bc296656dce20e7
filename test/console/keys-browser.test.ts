import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import {
  createKey,
  createTenant,
  createUser,
  insertRole,
  KEY_SHAPE,
  PASSWORD,
  waitFor,
} from '../helpers/fixtures.js'
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

// A Client Key's own page in a real Chromium (contract section 19, Keys): the usage chart of requests per
// hour and the request log, allowlists edited in place, rotate (the new value shown once, with a copy
// button) and revoke, each after a confirming click; and none of those controls for a reader.

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

t.setTimeout(300_000)
t.test(
  'console in Chromium: a Client Key’s usage, log, allowlists, rotation',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    await insertRole(app, tenant, 'key-reader', 10, ['client-keys:read'])
    const reader = await createUser(app, tenant, { email: 'reader@acme.test', roles: ['key-reader'] })
    const key = await createKey(app, tenant, ['users:read'])
    // Why by hand: the fixture names every key `fixture`, and the screen finds this one by its name.
    await app.ctx.dbs.main
      .updateTable('client_keys')
      .set({ name: 'billing' })
      .where('id', '=', key.id)
      .execute()
    // Three answered calls and one refused (a scope the key lacks), for the chart and the log.
    for (let i = 0; i < 3; i++) await call(app, 'listUsers', { key: key.value })
    t.equal((await call(app, 'listRoles', { key: key.value })).status, 403, 'a refused call')
    const logReader = { key: (await createKey(app, tenant, ['client-keys:read'])).value }
    const logged = async () => {
      const res = await call(app, 'getClientKeyLogs', logReader, { params: { id: key.id } })
      return res.status === 200 && res.data.total >= 4
    }
    t.not(await waitFor(logged, 5000, 200), -1, 'the key’s requests are logged')

    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    await signIn(page, origin, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    await page.goto(`${origin}/console/keys`)
    await h1(page, 'Keys')
    await page.getByRole('link', { name: 'billing', exact: true }).click()
    await h1(page, 'Key billing')
    t.match(page.url(), /\/console\/keys\/[0-9a-f-]{36}$/, 'the key’s page has its own URL')
    await page.getByRole('img', { name: /Requests per hour/ }).waitFor()
    await page.getByRole('cell', { name: 'GET /api/v1/roles' }).waitFor()
    t.equal(
      await page.getByRole('cell', { name: '403', exact: true }).count(),
      1,
      'the refused call in the log',
    )
    t.equal(await page.getByRole('cell', { name: '200', exact: true }).count(), 3, 'the answered calls')
    await page.getByText('Data of “Requests per hour, last 24 hours”').click()
    const hours = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Hour' }) })
    t.equal(await hours.getByRole('row').count(), 25, 'the chart’s data: a header and 24 hours')
    const thisHour = hours.getByRole('row').last()
    t.same(
      await thisHour.getByRole('cell').allInnerTexts(),
      [await thisHour.getByRole('cell').first().innerText(), '3', '1'],
      'this hour: three answered, one refused',
    )
    await page.waitForLoadState('networkidle')
    t.same(await axeViolations(page), [], 'a key’s page: no serious or critical axe violation')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'key')
    }

    // Allowlists: a bad entry is refused with the service's words; good ones are saved.
    await page.getByLabel('IP allowlist').fill('not-an-address')
    await page.getByRole('button', { name: 'Save allowlists' }).click()
    await page.getByRole('alert').waitFor()
    t.pass('a bad CIDR is refused, with the service’s message')
    await page.getByLabel('IP allowlist').fill('203.0.113.0/24\n2001:db8::/32')
    await page.getByLabel('Allowed origins').fill('https://app.acme.test')
    await page.getByRole('button', { name: 'Save allowlists' }).click()
    await page.getByRole('status').filter({ hasText: 'Allowlists saved.' }).waitFor()
    const stored = await app.ctx.dbs.main
      .selectFrom('client_keys')
      .select(['ip_allowlist', 'origin_allowlist'])
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    t.same(
      [stored.ip_allowlist, stored.origin_allowlist],
      [['203.0.113.0/24', '2001:db8::/32'], ['https://app.acme.test']],
      'both allowlists stored',
    )

    // Rotate with a grace period: asks first, then shows the new value once, with a copy button.
    await page.getByLabel('Old value keeps working for').selectOption('3600')
    await page.getByRole('button', { name: 'Rotate billing' }).click()
    await page.getByRole('group', { name: 'Rotate billing' }).waitFor()
    t.same(await axeViolations(page), [], 'the rotate confirmation: no serious or critical axe violation')
    await page.getByRole('button', { name: 'Rotate now' }).click()
    const value = await page.getByLabel('Key value').inputValue()
    t.match(value, KEY_SHAPE, 'the new value is shown')
    t.not(value, key.value, 'and it is new')
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    await page.getByRole('button', { name: 'Copy' }).click()
    await page
      .getByRole('status')
      .filter({ hasText: /Copied\.|Could not copy/ })
      .waitFor()
    t.same(await axeViolations(page), [], 'the value shown once: no serious or critical axe violation')
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, 'key-rotated')
    }
    await page.getByRole('button', { name: 'I have stored it' }).click()
    t.notOk((await page.content()).includes(value), 'the value is gone from the page')
    t.equal(
      (await call(app, 'listUsers', { key: value, ip: '203.0.113.7' })).status,
      200,
      'the new value works',
    )
    t.equal(
      (await call(app, 'listUsers', { key: key.value, ip: '203.0.113.7' })).status,
      200,
      'the old one, in its grace hour',
    )

    // Revoke: asks first; the key is then REVOKED and its controls are gone.
    await page.getByRole('button', { name: 'Revoke billing' }).click()
    await page.getByRole('button', { name: 'Revoke now' }).click()
    await page.getByRole('definition').filter({ hasText: 'REVOKED' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'Save allowlists' }).count(), 0, 'no allowlist form')
    t.equal(
      (await call(app, 'listUsers', { key: value, ip: '203.0.113.7' })).status,
      401,
      'the revoked key is refused',
    )

    // createClientKey with an expiry: the day chosen, through its end (UTC); the list says when.
    await page.goto(`${origin}/console/keys`)
    await h1(page, 'Keys')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByLabel('Name', { exact: true }).fill('expiring')
    await page.getByRole('checkbox', { name: 'users:read', exact: true }).check()
    const day = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
    await page.getByLabel('Expires on (empty: never)').fill(day)
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('button', { name: 'I have stored it' }).click()
    const expiring = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('client_keys')
      .select('expires_at')
      .where('tenant_id', '=', tenant.id)
      .where('name', '=', 'expiring')
      .executeTakeFirstOrThrow()
    t.equal(expiring.expires_at?.toISOString(), `${day}T23:59:59.000Z`, 'stored as the end of that day')
    const row = page.getByRole('row').filter({ hasText: 'expiring' })
    t.notMatch(await row.innerText(), /Never/, 'the list shows the expiry')

    // A reader (client-keys:read only) sees the usage and the log, and no control.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(page, origin, tenant.code, reader.email, PASSWORD)
    await h1(page, 'Overview')
    await page.goto(`${origin}/console/keys`)
    await h1(page, 'Keys')
    await page.getByRole('link', { name: 'billing', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: /^Key / }).waitFor()
    await page.getByRole('heading', { name: 'Request log' }).waitFor()
    t.equal(
      await page.getByRole('button', { name: /^(Rotate|Revoke|Save allowlists|Create key)/ }).count(),
      0,
      'no control',
    )
    t.equal(await page.getByRole('textbox').count(), 0, 'the allowlists read only')

    t.same(problems, [], 'no CSP violation or page error')
  },
)
