import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, insertRole, PASSWORD } from '../helpers/fixtures.js'
import { axeAtBothWidths, buildConsole, launch, listen, NO_BROWSER, openPage, signIn } from './browser.js'

// Issue 44, sortable tables in a real Chromium: a heading's button sorts the list (ascending, then
// descending, aria-sort on the heading), the sort is in the URL with the search and filters, and a
// reload and Back keep it. Users, Roles, Permissions and both lists of Keys (each its own URL value).

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

/** The text of column `index` (from 1) of the table inside `scope`, top to bottom. */
const column = (page: Page, index: number, scope = 'main') =>
  page.locator(scope).locator('table').first().locator(`tbody tr td:nth-child(${index})`).allInnerTexts()

const sorted = (values: string[], dir: 'asc' | 'desc') => {
  const up = [...values].sort((a, b) => a.localeCompare(b))
  return dir === 'asc' ? up : up.reverse()
}

t.setTimeout(300_000)
t.test('console in Chromium: sortable tables, the sort in the URL', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { email: 'mia@acme.test', roles: ['admin'] })
  const emails = ['bob@acme.test', 'ana@acme.test', 'carl@acme.test']
  for (const email of emails) await createUser(app, tenant, { email, roles: ['user'] })
  await insertRole(app, tenant, 'billing', 10, ['users:read'])
  await insertRole(app, tenant, 'support', 30, ['users:read'])
  const db = app.ctx.dbs.main
  const permissions: [string, string, string][] = [
    ['invoices', 'read', 'Read invoices'],
    ['reports', 'read', 'Another'],
  ]
  for (const [resource, action, description] of permissions) {
    await app.ctx.dbs
      .forTenant(tenant.id)
      .insertInto('permissions')
      .values({ tenant_id: tenant.id, name: `${resource}:${action}`, resource, action, description })
      .execute()
  }
  for (const name of ['Zulu back end', 'Alpha back end']) {
    const key = await createKey(app, tenant, ['users:read'])
    await db.updateTable('client_keys').set({ name }).where('id', '=', key.id).execute()
  }
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)
  await signIn(page, origin, tenant.code, admin.email, PASSWORD)
  await h1(page, 'Overview')

  // Users: sorted by the User heading, ascending then descending, in the URL.
  await page.getByRole('link', { name: 'Users', exact: true }).click()
  await h1(page, 'Users')
  const all = [...emails, admin.email]
  const heading = page.getByRole('columnheader', { name: 'User' })
  t.equal(await heading.getAttribute('aria-sort'), null, 'unsorted at first')
  await heading.getByRole('button', { name: 'User' }).click()
  await page.waitForURL(/\/console\/users\?sort=user$/)
  t.same(await column(page, 1), sorted(all, 'asc'), 'ascending')
  t.equal(await heading.getAttribute('aria-sort'), 'ascending')
  // By keyboard: the heading's button takes Enter.
  await heading.getByRole('button', { name: 'User' }).focus()
  await page.keyboard.press('Enter')
  await page.waitForURL(/\?sort=-user$/)
  t.same(await column(page, 1), sorted(all, 'desc'), 'descending')
  t.equal(await heading.getAttribute('aria-sort'), 'descending')
  await axeAtBothWidths(t, page, 'users-sorted')
  await page.reload()
  await h1(page, 'Users')
  t.same(await column(page, 1), sorted(all, 'desc'), 'a reload keeps the sort')
  await page.goBack()
  await page.waitForURL(/\?sort=user$/)
  t.same(await column(page, 1), sorted(all, 'asc'), 'Back: the sort before')
  // A search keeps the sort, and the sort keeps the search.
  await page.getByLabel('Search users').fill('a')
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForURL(/\?sort=user&q=a$/)
  await page.getByRole('button', { name: 'User', exact: true }).click()
  await page.waitForURL(/\?sort=-user&q=a$/)
  t.equal(await page.getByLabel('Search users').inputValue(), 'a', 'the search stays')

  // Roles, by level: a number, not text.
  await page.getByRole('link', { name: 'Roles', exact: true }).click()
  await h1(page, 'Roles')
  await page.getByRole('button', { name: 'Level', exact: true }).click()
  await page.waitForURL(/\/console\/roles\?sort=level$/)
  const levels = (await column(page, 2)).map(Number)
  t.same(
    levels,
    [...levels].sort((a, b) => a - b),
    'levels ascending',
  )
  t.ok(levels.length >= 4, 'the built-in roles and the two made here')

  // Permissions, by name.
  await page.getByRole('link', { name: 'Permissions', exact: true }).click()
  await h1(page, 'Permissions')
  await page.getByRole('button', { name: 'Permission', exact: true }).click()
  await page.waitForURL(/\?sort=permission$/)
  t.same(await column(page, 1), ['invoices:read', 'reports:read'])
  await page.getByRole('button', { name: 'Permission', exact: true }).click()
  t.same(await column(page, 1), ['reports:read', 'invoices:read'])

  // Keys: the Client Keys list is `sort`, the publishable keys' their own value, so each keeps its own.
  await page.getByRole('link', { name: 'Keys', exact: true }).click()
  await h1(page, 'Keys')
  const clientKeys = page.getByRole('region', { name: 'Client Keys' })
  await clientKeys.getByRole('button', { name: 'Name', exact: true }).click()
  await page.waitForURL(/\/console\/keys\?sort=name$/)
  t.same(await column(page, 1, 'section[aria-labelledby="client-keys"]'), ['Alpha back end', 'Zulu back end'])
  await clientKeys.getByRole('button', { name: 'Name', exact: true }).click()
  await page.waitForURL(/\?sort=-name$/)
  t.same(await column(page, 1, 'section[aria-labelledby="client-keys"]'), ['Zulu back end', 'Alpha back end'])
  await page.reload()
  await h1(page, 'Keys')
  t.equal(
    await clientKeys.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort'),
    'descending',
    'reload: still descending',
  )
  t.same(problems, [])
})
