import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, insertRole, PASSWORD, roleByName, userRow } from '../helpers/fixtures.js'
import { buildConsole, launch, listen, NO_BROWSER, openPage, signIn, axeAtBothWidths } from './browser.js'

// What issue 44 found missing where a person looks for it, in a real Chromium: a Permissions screen for the
// tenant's own permissions (created, described, given to a role, deleted), a role's holders, deleting a user,
// and the Users search kept in the URL.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

t.setTimeout(300_000)
t.test(
  'console in Chromium: custom permissions, role holders, deleting a user',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    await insertRole(app, tenant, 'billing', 10, ['users:read'])
    const ana = await createUser(app, tenant, { email: 'ana@acme.test', roles: ['billing'] })
    const bob = await createUser(app, tenant, { email: 'bob@acme.test', roles: ['user'] })
    const origin = await listen(app)
    const context = await launch(t)
    const { page, problems } = await openPage(context)
    await signIn(page, origin, tenant.code, admin.email, PASSWORD)
    await h1(page, 'Overview')

    // createPermission: the screen is in the menu; a custom permission made there is listed.
    await page.getByRole('link', { name: 'Permissions' }).click()
    await h1(page, 'Permissions')
    await page.getByText('No permission of your own yet.').waitFor()
    await page.getByRole('button', { name: 'Create permission' }).click()
    await page.getByLabel('Name').fill('invoices:read')
    await page.getByLabel('Description', { exact: true }).fill('Read invoices')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByText('Permission invoices:read created.', { exact: false }).waitFor()
    await page.getByText('1 permission of your own').waitFor()
    await axeAtBothWidths(t, page, 'permissions')

    // A name the API refuses: the form says so, nothing is made.
    await page.getByLabel('Name').fill('invoices:read')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: /already exists/i })
      .waitFor()

    // updatePermission: its description edited in place.
    await page.getByLabel('Description of invoices:read').fill('Read every invoice')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved.').waitFor()
    const stored = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('permissions')
      .select(['id', 'description'])
      .where('tenant_id', '=', tenant.id)
      .where('name', '=', 'invoices:read')
      .executeTakeFirstOrThrow()
    t.equal(stored.description, 'Read every invoice')

    // Given to a role on the role's page: the admin's refreshed token holds it, so the editor offers it.
    const billing = await roleByName(app, tenant.id, 'billing')
    await page.goto(`${origin}/console/roles/${billing.id}`)
    await h1(page, 'Role billing')
    await page.getByRole('checkbox', { name: 'invoices:read' }).check()
    await page.getByRole('button', { name: 'Save permissions' }).click()
    await page.getByText('Permissions saved.').waitFor()
    const held = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('role_permissions')
      .select('permission_id')
      .where('role_id', '=', billing.id)
      .where('permission_id', '=', stored.id)
      .execute()
    t.equal(held.length, 1, 'the role holds the custom permission')

    // listUsers by role: the role's holders, each a link to their page.
    const holders = page.getByRole('region', { name: 'Holders' })
    await holders.getByText('1 person holds it.').waitFor()
    t.equal(await holders.getByRole('link').count(), 1)
    await holders.getByRole('link', { name: ana.email }).waitFor()
    await axeAtBothWidths(t, page, 'role-holders')

    // deletePermission: asked once more, then gone from the list and from the role.
    await page.goto(`${origin}/console/permissions`)
    await h1(page, 'Permissions')
    await page.getByRole('button', { name: 'Delete invoices:read' }).click()
    await page.getByRole('button', { name: 'Delete it' }).click()
    await page.getByText('No permission of your own yet.').waitFor()

    // The Users search lives in the URL: a reload keeps it.
    await page.goto(`${origin}/console/users`)
    await h1(page, 'Users')
    await page.getByLabel('Search users').fill('bob')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/\/console\/users\?q=bob$/)
    await page.reload()
    await h1(page, 'Users')
    t.equal(await page.getByLabel('Search users').inputValue(), 'bob')
    await page.getByRole('link', { name: bob.email }).waitFor()
    t.equal(await page.getByRole('link', { name: ana.email }).count(), 0)

    // The password rule is shown before a password is sent (the tenant's default policy).
    await page.getByRole('button', { name: 'Create user' }).click()
    const rule = page.getByText(
      'At least 8 characters; not a common password. At most 72 bytes — about 72 letters, fewer with accents or emoji.',
    )
    await rule.waitFor()
    t.equal(
      await page.getByLabel('Initial password').getAttribute('aria-describedby'),
      await rule.getAttribute('id'),
      'and tied to the field',
    )
    // 40 accented letters are 80 bytes: refused in the form, in the rule's words, and never sent.
    const registers: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/api/v1/register')) registers.push(r.url())
    })
    await page.getByLabel('Email').fill('long@acme.test')
    await page.getByLabel('Initial password').fill('é'.repeat(40))
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: 'This password is too long (80 bytes): at most 72 bytes' })
      .waitFor()
    t.same(registers, [], 'no request sent')
    await page.getByRole('button', { name: 'Cancel' }).click()

    // deleteUser: from the user's page, asked once more; the list says so and the row is gone.
    await page.getByRole('link', { name: bob.email }).click()
    await h1(page, `User ${bob.email}`)
    await page.getByRole('button', { name: `Delete ${bob.email}` }).click()
    await axeAtBothWidths(t, page, 'delete-user')
    await page.getByRole('button', { name: 'Delete the user' }).click()
    await page.getByText(`User ${bob.email} deleted.`).waitFor()
    await t.rejects(userRow(app, tenant.id, bob.id), 'the user row is gone')
    // One's own page offers no deletion.
    await page.goto(`${origin}/console/users/${admin.id}`)
    await h1(page, `User ${admin.email}`)
    t.equal(await page.getByRole('button', { name: `Delete ${admin.email}` }).count(), 0)
    // Nor the page of someone at the caller's own level, whom the hierarchy rule keeps it from deleting.
    const peer = await createUser(app, tenant, { email: 'peer@acme.test', roles: ['admin'] })
    await page.goto(`${origin}/console/users/${peer.id}`)
    await h1(page, `User ${peer.email}`)
    await page.getByRole('heading', { name: 'Sessions' }).waitFor()
    await page.waitForLoadState('networkidle')
    t.equal(
      await page.getByRole('button', { name: `Delete ${peer.email}` }).count(),
      0,
      'an equal: no Delete',
    )
    t.same(problems, [])
  },
)
