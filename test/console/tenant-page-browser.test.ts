import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, PASSWORD, platformTenant } from '../helpers/fixtures.js'
import { axeAtBothWidths, buildConsole, launch, listen, NO_BROWSER, openPage, signIn } from './browser.js'

// Issue 44, a tenant's page in a real Chromium: a platform admin reaches any tenant's from the Tenants list
// (its name a link), edits it (the change kept by the service), deletes it after a confirming click; the
// Tenants list sorts by a heading and filters by status, both in the URL; a tenant admin reaches its own
// tenant's page from the Overview, with its counts and no status or deletion.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

/** The text of one column of the page's first table, top to bottom. */
const column = (page: Page, index: number) =>
  page.locator('table').first().locator(`tbody tr td:nth-child(${index})`).allInnerTexts()

t.setTimeout(300_000)
t.test('console in Chromium: a tenant’s page, its edit and deletion', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const platform = await platformTenant(app)
  const root = await createUser(app, platform, { email: 'root@platform.test', roles: ['admin'] })
  const acme = await createTenant(app)
  const doomed = await createTenant(app)
  const ana = await createUser(app, acme, { email: 'ana@acme.test', roles: ['admin'] })
  const tenantRow = (id: string) =>
    app.ctx.dbs.main.selectFrom('tenants').select(['name', 'status']).where('id', '=', id).executeTakeFirst()
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)
  await signIn(page, origin, platform.code, root.email, PASSWORD)
  await h1(page, 'Overview')

  // getTenant: the Tenants list's name links to the tenant's page, with what GET returns.
  await page.getByRole('link', { name: 'Tenants', exact: true }).click()
  await h1(page, 'Tenants')
  await page.getByRole('link', { name: `Tenant ${acme.code}` }).click()
  await h1(page, `Tenant Tenant ${acme.code}`)
  t.match(page.url(), `${origin}/console/tenants/${acme.id}`, 'the page has its own URL')
  const details = page.getByRole('region', { name: 'Details' })
  await details.getByText(acme.code, { exact: true }).waitFor()
  await details.getByText('ACTIVE', { exact: true }).waitFor()
  t.equal(
    await page.getByRole('region', { name: 'Counts' }).count(),
    0,
    'no counts: the API has them for one’s own',
  )
  await axeAtBothWidths(t, page, 'tenant-page')

  // updateTenant: name and status, kept by the service and shown after a reload.
  await page.getByLabel('Name').fill('Acme Corp')
  await page.getByLabel('Status').selectOption('INACTIVE')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByText('Saved.').waitFor()
  t.same(await tenantRow(acme.id), { name: 'Acme Corp', status: 'INACTIVE' }, 'the change persisted')
  await page.reload()
  await h1(page, 'Tenant Acme Corp')
  t.equal(await page.getByLabel('Status').inputValue(), 'INACTIVE')
  await page.getByLabel('Status').selectOption('ACTIVE')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByText('Saved.').waitFor()
  t.same(await tenantRow(acme.id), { name: 'Acme Corp', status: 'ACTIVE' }, 'and back')

  // The Tenants list: sorted by a heading's button, filtered by status, both kept in the URL.
  await page.getByRole('link', { name: '← Tenants' }).click()
  await h1(page, 'Tenants')
  await page.getByRole('button', { name: 'Code', exact: true }).click()
  await page.waitForURL(/\/console\/tenants\?sort=code$/)
  const codes = [platform.code, acme.code, doomed.code].sort()
  t.same(await column(page, 2), codes, 'sorted by code, ascending')
  await page.getByRole('button', { name: 'Code', exact: true }).click()
  await page.waitForURL(/\?sort=-code$/)
  t.same(await column(page, 2), [...codes].reverse(), 'then descending')
  t.equal(await page.getByRole('columnheader', { name: 'Code' }).getAttribute('aria-sort'), 'descending')
  await page.getByLabel('Status').selectOption('INACTIVE')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.waitForURL(/\?sort=-code&status=INACTIVE$/)
  await page.getByText('No tenant has this status.').waitFor()
  await page.goBack()
  await page.waitForURL(/\?sort=-code$/)
  t.same(await column(page, 2), [...codes].reverse(), 'Back: the sort alone again')

  // deleteTenant: asked once more with what it does, then gone; the list says so.
  await page.getByRole('link', { name: `Tenant ${doomed.code}` }).click()
  await h1(page, `Tenant Tenant ${doomed.code}`)
  await page.getByText('Its audit log stays.', { exact: false }).waitFor()
  await page.getByRole('button', { name: `Delete Tenant ${doomed.code}` }).click()
  await axeAtBothWidths(t, page, 'tenant-delete')
  await page.getByRole('button', { name: 'Delete the tenant' }).click()
  await page.getByText(`Tenant Tenant ${doomed.code} deleted.`).waitFor()
  t.equal(await tenantRow(doomed.id), undefined, 'the tenant row is gone')
  t.equal(await page.getByRole('link', { name: `Tenant ${doomed.code}` }).count(), 0)

  // The platform tenant's page: its name may change, but no status and no deletion (the service refuses both).
  await page.getByRole('link', { name: 'Platform', exact: true }).click()
  await h1(page, 'Tenant Platform')
  await page.getByRole('region', { name: 'Counts' }).waitFor()
  await page.getByLabel('Name').waitFor()
  t.equal(await page.getByLabel('Status').count(), 0, 'the platform tenant: no status')
  t.equal(await page.getByRole('button', { name: /^Delete / }).count(), 0, 'nor Delete')

  // A tenant admin: its own tenant's page from the Overview, its counts, its name's edit, nothing else.
  await page.getByRole('button', { name: 'Sign out' }).click()
  await signIn(page, origin, acme.code, ana.email, PASSWORD)
  await h1(page, 'Overview')
  await page.getByRole('link', { name: 'Acme Corp' }).click()
  await h1(page, 'Tenant Acme Corp')
  await page.getByRole('region', { name: 'Counts' }).getByText('Active sessions').waitFor()
  t.equal(await page.getByRole('link', { name: '← Tenants' }).count(), 0, 'no way to the Tenants list')
  t.equal(await page.getByLabel('Status').count(), 0, 'no status of its own tenant')
  t.equal(await page.getByRole('button', { name: /^Delete / }).count(), 0, 'no deletion')
  await axeAtBothWidths(t, page, 'tenant-page-own')
  await page.getByLabel('Name').fill('Acme Incorporated')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByText('Saved.').waitFor()
  t.same(await tenantRow(acme.id), { name: 'Acme Incorporated', status: 'ACTIVE' })
  // Another tenant's page: the service answers TENANT_NOT_FOUND, and the page offers nothing.
  await page.goto(`${origin}/console/tenants/${platform.id}`)
  await h1(page, 'Tenant')
  await page.getByRole('alert').waitFor()
  t.equal(await page.getByLabel('Name').count(), 0)
  t.same(problems, [])
})
