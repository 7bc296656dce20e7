import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  insertRole,
  keyCred,
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

// Roles and a user's direct permissions in a real Chromium (contract section 19, Roles and Users): create
// a role, edit its permissions, delete it; grant and revoke a user's direct permission; send a
// verification mail, unlock, reset a password. A caller whose permissions do not cover a control never
// sees it.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

async function shots(t: Test, page: Page, name: string) {
  await page.waitForLoadState('networkidle')
  t.same(await axeViolations(page), [], `${name}: no serious or critical axe violation`)
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 })
    await screenshot(page, name)
  }
}

t.setTimeout(300_000)
t.test('console in Chromium: roles, and a user’s direct permissions', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  // Why a mail transport: "Send verification mail" is answered 503 MAIL_NOT_CONFIGURED without one.
  const app = await buildTestApp(t, { SMTP_URL: 'log://', MAIL_FROM: 'Tessera <no-reply@acme.test>' })
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
  const bob = await createUser(app, tenant, { email: 'bob@acme.test', roles: ['user'] })
  await insertRole(app, tenant, 'viewer', 10, ['roles:read', 'users:read', 'permissions:read'])
  const viewer = await createUser(app, tenant, { email: 'viewer@acme.test', roles: ['viewer'] })
  const reader = await keyCred(app, tenant, ['roles:read', 'permissions:read'])
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)
  await signIn(page, origin, tenant.code, admin.email, PASSWORD)
  await h1(page, 'Overview')

  // Create a role with two permissions: its own page follows.
  await page.goto(`${origin}/console/roles`)
  await h1(page, 'Roles')
  await page.getByRole('button', { name: 'Create role' }).click()
  await page.getByLabel('Role name').fill('editor')
  await page.getByLabel('Description').fill('Edits users')
  await page.getByLabel('Level').fill('20')
  await page.getByRole('checkbox', { name: 'users:read', exact: true }).check()
  await page.getByRole('checkbox', { name: 'users:update', exact: true }).check()
  await shots(t, page, 'roles-create')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await h1(page, 'Role editor')
  t.match(page.url(), /\/console\/roles\/[0-9a-f-]{36}$/, 'the new role’s page has its own URL')
  const roleId = page.url().split('/').pop() ?? ''
  const permsOf = async () =>
    (await call(app, 'getRolePermissions', reader, { params: { id: roleId } })).data.permissions.sort()
  t.same(await permsOf(), ['users:read', 'users:update'], 'created with its permissions')

  // Edit its permissions: one revoked, one granted, in one save.
  await page.getByRole('checkbox', { name: 'users:update', exact: true }).uncheck()
  await page.getByRole('checkbox', { name: 'roles:read', exact: true }).check()
  await page.getByRole('button', { name: 'Save permissions' }).click()
  await page.getByRole('status').filter({ hasText: 'Permissions saved.' }).waitFor()
  t.same(await permsOf(), ['roles:read', 'users:read'], 'users:update revoked, roles:read granted')
  await shots(t, page, 'role')

  // Its details: a new level and description.
  await page.getByLabel('Level').fill('30')
  await page.getByLabel('Description').fill('Edits users and reads roles')
  await page.getByRole('button', { name: 'Save role' }).click()
  await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor()
  const edited = (await call(app, 'getRole', reader, { params: { id: roleId } })).data
  t.same([edited.level, edited.description], [30, 'Edits users and reads roles'], 'details stored')

  // Delete it, after a confirming click.
  await page.getByRole('button', { name: 'Delete role editor' }).click()
  await page.getByRole('group', { name: 'Delete role editor' }).waitFor()
  t.same(await axeViolations(page), [], 'the delete confirmation: no serious or critical axe violation')
  await page.getByRole('button', { name: 'Delete now' }).click()
  await h1(page, 'Roles')
  await page.getByRole('link', { name: 'viewer', exact: true }).waitFor()
  t.equal(await page.getByRole('link', { name: 'editor', exact: true }).count(), 0, 'the role is gone')
  t.equal((await call(app, 'getRole', reader, { params: { id: roleId } })).status, 404, 'deleted')

  // The built-in admin role: nothing to narrow, nothing to delete.
  await page.getByRole('link', { name: 'admin', exact: true }).click()
  await h1(page, 'Role admin')
  await page.getByText('the built-in admin role cannot be narrowed').waitFor()
  t.equal(
    await page.getByRole('button', { name: /^(Delete role|Save permissions|Save role)/ }).count(),
    0,
    'no control',
  )

  // A user's page: a direct permission granted, then revoked.
  await page.goto(`${origin}/console/users/${bob.id}`)
  await h1(page, 'User bob@acme.test')
  await page.getByLabel('Permission to grant').selectOption('auth:logs')
  await page.getByRole('button', { name: 'Grant permission' }).click()
  await page.getByRole('button', { name: 'Revoke permission auth:logs' }).waitFor()
  const direct = async () =>
    (await call(app, 'getUserPermissions', reader, { params: { userId: bob.id } })).data.direct
  t.same(await direct(), ['auth:logs'], 'granted, as stored')
  await shots(t, page, 'user-permissions')
  await page.getByRole('button', { name: 'Revoke permission auth:logs' }).click()
  await page.getByRole('region', { name: 'Permissions' }).getByText('None.').first().waitFor()
  t.same(await direct(), [], 'revoked, as stored')

  // Account actions: a verification mail, unlock, a new password.
  await page.getByRole('button', { name: 'Send verification mail' }).click()
  await page.getByRole('status').filter({ hasText: 'A verification mail is on its way.' }).waitFor()
  t.not(
    await waitFor(async () => (await auditRows(app, tenant.id, 'EMAIL_VERIFICATION_SENT')).length === 1),
    -1,
    'the mail was queued',
  )
  await page.getByRole('button', { name: 'Unlock' }).click()
  await page.getByRole('status').filter({ hasText: 'Unlocked' }).waitFor()
  await page.getByLabel('New password').fill('Bob-new-passphrase-77')
  await page.getByRole('button', { name: 'Reset password' }).click()
  await page.getByRole('status').filter({ hasText: 'Password reset' }).waitFor()
  const relogin = await call(
    app,
    'login',
    {},
    {
      body: { tenantCode: tenant.code, identifier: bob.email, password: 'Bob-new-passphrase-77' },
    },
  )
  t.equal(relogin.status, 200, 'bob signs in with the new password')

  // A viewer (roles:read, users:read, permissions:read) sees roles and grants, and no control.
  await page.getByRole('button', { name: 'Sign out' }).click()
  await signIn(page, origin, tenant.code, viewer.email, PASSWORD)
  await h1(page, 'Overview')
  await page.goto(`${origin}/console/roles`)
  await h1(page, 'Roles')
  await page.getByRole('link', { name: 'viewer', exact: true }).click()
  await h1(page, 'Role viewer')
  await page.getByRole('heading', { level: 2, name: 'Permissions' }).waitFor()
  t.equal(await page.getByRole('checkbox').count(), 0, 'the role’s permissions read only')
  t.equal(
    await page.getByRole('button', { name: /^(Create role|Delete role|Save permissions|Save role)/ }).count(),
    0,
    'no role control',
  )
  await page.goto(`${origin}/console/users/${bob.id}`)
  await h1(page, 'User bob@acme.test')
  await page.getByRole('heading', { level: 3, name: 'Effective' }).waitFor()
  t.equal(
    await page
      .getByRole('button', { name: /^(Grant permission|Revoke permission|Unlock|Reset password)/ })
      .count(),
    0,
    'no user control',
  )

  t.same(problems, [], 'no CSP violation or page error')
})
