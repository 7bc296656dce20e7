import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { call, newClientKey } from '../helpers/call.js'
import { createKey, createTenant, createUser, PASSWORD, userWithToken } from '../helpers/fixtures.js'
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

// The audit log screen in a real Chromium (issue 44): events in words with people's names (section 25's
// administrative events beside the sign-ins), the names of a page's people read in one request and its Client
// Keys' in one more, and a filter by email.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

t.setTimeout(300_000)
t.test('console in Chromium: the audit log in words, with names', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const ana = await userWithToken(app, tenant, { email: 'ana@acme.test', roles: ['admin'] })
  await createUser(app, tenant, { email: 'bob@acme.test', roles: ['user'] })
  // Section 25's rows: Ana creates the role ops and changes it; a refused call is a failure row.
  const ops = await call(app, 'createRole', ana.cred, { body: { name: 'ops', level: 10, permissions: [] } })
  t.equal(ops.status, 201)
  t.equal(
    (
      await call(app, 'updateRole', ana.cred, {
        params: { id: ops.data.id },
        body: { description: 'On call' },
      })
    ).status,
    200,
  )
  // A key Ana issues creates a role; a key that acted and is gone since reads as deleted.
  const robot = await newClientKey(app, ana.cred, { name: 'billing backend', scopes: ['roles:create'] })
  const byKey = { key: robot.key }
  t.equal((await call(app, 'createRole', byKey, { body: { name: 'billing', permissions: [] } })).status, 201)
  const gone = await createKey(app, tenant, ['roles:create'])
  t.equal(
    (await call(app, 'createRole', { key: gone.value }, { body: { name: 'temp', permissions: [] } })).status,
    201,
  )
  await app.ctx.dbs.main.deleteFrom('client_keys').where('id', '=', gone.id).execute()
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)
  const namesRequests: string[] = []
  const keyNamesRequests: string[] = []
  page.on('request', (r) => {
    if (/\/api\/v1\/users\?.*ids=/.test(r.url())) namesRequests.push(r.url())
    if (/\/api\/v1\/client-keys\/tenant\?.*ids=/.test(r.url())) keyNamesRequests.push(r.url())
  })
  // Bob signs in first (a LOGIN row of his), then Ana in the console.
  await signIn(page, origin, tenant.code, 'bob@acme.test', PASSWORD)
  await h1(page, 'Overview')
  await page.getByRole('button', { name: 'Sign out' }).click()
  await h1(page, 'Sign in')
  await signIn(page, origin, tenant.code, ana.email, PASSWORD)
  await h1(page, 'Overview')

  await page.getByRole('link', { name: 'Audit log' }).click()
  await h1(page, 'Audit log')
  const table = page.getByRole('table')
  await table.getByText('ana@acme.test created the role ops').waitFor()
  await table.getByText('ana@acme.test changed the role ops').waitFor()
  await table.getByText('(description)').waitFor()
  await table.getByText('bob@acme.test signed in').first().waitFor()
  await table.getByText('ana@acme.test signed in').first().waitFor()
  await table.getByText('ana@acme.test issued the Client Key “billing backend”').waitFor()
  await table.getByText('The Client Key “billing backend” created the role billing').waitFor()
  await table.getByText('A deleted Client Key created the role temp').waitFor()
  t.equal(namesRequests.length, 1, `one request names the page's people: ${namesRequests.join(' ')}`)
  t.equal(keyNamesRequests.length, 1, `one request names its keys: ${keyNamesRequests.join(' ')}`)
  t.equal(await table.getByText(/^A Client Key\b/).count(), 0, 'no key left unnamed')
  t.equal(await table.getByText(/user [0-9a-f]{8}\b/).count(), 0, 'no raw id where a name is known')
  await page.waitForLoadState('networkidle')
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 })
    t.same(await axeViolations(page), [], `audit log at ${width} px: no serious or critical axe violation`)
    await screenshot(page, 'audit-log')
  }
  await page.setViewportSize({ width: 1440, height: 900 })

  // The filter by email: only Bob's rows.
  await page.getByLabel('User (email, username or id)').fill('bob@acme.test')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  await table.getByText('bob@acme.test signed in').first().waitFor()
  // Why wait for Ana's rows to go: Bob's rows are on the unfiltered page too, so seeing one does not say the
  // filtered page has replaced it (a loaded run saw the old page here).
  await table
    .getByText('ana@acme.test')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => undefined)
  t.equal(await table.getByText('ana@acme.test').count(), 0, 'none of Ana’s rows')
  // An email of no user: said in words, the filters kept as they were.
  await page.getByLabel('User (email, username or id)').fill('nobody@acme.test')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  await page.getByRole('alert').filter({ hasText: 'No user matches “nobody@acme.test”.' }).waitFor()
  t.same(problems, [])
})
