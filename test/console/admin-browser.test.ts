import t from 'tap'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { login } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'
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

// A tenant's administrator at work in a real Chromium, one flow per screen of contract section 19, each
// through the labels and headings the contract names; axe-core and two widths on every screen.

const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor()

// Why more than .taprc's 120 s: a real browser on a shared 2-core machine; each step still waits at most 20 s.
t.setTimeout(300_000)
t.test('console in Chromium: a tenant admin’s screens and flows', { skip: NO_BROWSER }, async (t) => {
  buildConsole()
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
  await createUser(app, tenant, { email: 'bob@acme.test', roles: ['user'] })
  // A failed login, for the charts, the top failing addresses and the audit filter.
  await login(app, tenant.code, 'bob@acme.test', 'wrong-password-123', '203.0.113.9')
  // A second session of the admin (another device), to revoke from the Account screen.
  await login(app, tenant.code, admin.email, PASSWORD, '198.51.100.7')
  const origin = await listen(app)
  const context = await launch(t)
  const { page, problems } = await openPage(context)

  await signIn(page, origin, tenant.code, admin.email, PASSWORD)
  await h1(page, 'Overview')
  await page.getByRole('img', { name: /Logins per hour/ }).waitFor()
  await page.getByRole('cell', { name: '203.0.113.9' }).waitFor()
  t.pass('Overview: the charts and the top failing address')

  // Every screen: its URL, its heading, no serious axe violation, 375 px and 1440 px.
  for (const [name, path] of [
    ['Overview', ''],
    ['Users', '/users'],
    ['Roles', '/roles'],
    ['Keys', '/keys'],
    ['Audit log', '/audit-log'],
    ['Settings', '/settings'],
    ['Account', '/account'],
  ] as const) {
    await page.goto(`${origin}/console${path}`)
    await h1(page, name)
    await page.waitForLoadState('networkidle')
    t.same(await axeViolations(page), [], `${name}: no serious or critical axe violation`)
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await screenshot(page, name.toLowerCase().replace(' ', '-'))
    }
  }

  // Users: create, edit, disable; assign a role.
  await page.goto(`${origin}/console/users`)
  await h1(page, 'Users')
  await page.getByRole('button', { name: 'Create user' }).click()
  await page.getByLabel('Email').fill('carol@acme.test')
  await page.getByLabel('Initial password').fill('Carol-passphrase-42')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await h1(page, 'User carol@acme.test')
  t.match(page.url(), /\/console\/users\/[0-9a-f-]{36}$/, 'the new user’s page has its own URL')
  t.same(await axeViolations(page), [], 'a user’s page: no serious or critical axe violation')
  await screenshot(page, 'user')
  await page.getByLabel('Username').fill('carol')
  await page.getByLabel('Status').selectOption('INACTIVE')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await page.getByRole('definition').filter({ hasText: 'INACTIVE' }).waitFor()
  await page.getByLabel('Role to assign').selectOption('admin')
  await page.getByRole('button', { name: 'Assign role' }).click()
  await page.getByRole('button', { name: 'Remove role admin' }).waitFor()
  const users = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('users')
    .select(['username', 'status'])
    .where('email', '=', 'carol@acme.test')
    .executeTakeFirstOrThrow()
  t.same(users, { username: 'carol', status: 'INACTIVE' }, 'edited and disabled, as stored')
  t.pass('a role assigned')

  // Account: revoke the other session.
  await page.goto(`${origin}/console/account`)
  await h1(page, 'Account')
  // Why wait for this session's row first: the heading comes before the list loads, and a count taken
  // then is 0 (a PostgreSQL pass under load caught it).
  const thisSession = page.getByRole('listitem').filter({ hasText: 'This session' })
  await thisSession.waitFor()
  const other = page.getByRole('button', { name: /^Revoke session/ })
  t.equal(await other.count(), 1, 'one other session listed')
  await other.click()
  await other.waitFor({ state: 'detached' })
  await thisSession.waitFor()
  await t.resolveMatch(other.count(), 0, 'the other session is gone')

  // Keys: create one, its value shown once, with a copy button.
  await page.goto(`${origin}/console/keys`)
  await h1(page, 'Keys')
  await page.getByRole('button', { name: 'Create key' }).click()
  await page.getByLabel('Name', { exact: true }).fill('billing backend')
  await page.getByRole('checkbox', { name: 'users:read' }).check()
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  const value = await page.getByLabel('Key value').inputValue()
  t.match(value, /^ck_[A-Za-z0-9_-]{43,}$/, 'the value is shown')
  await page.getByRole('button', { name: 'Copy' }).waitFor()
  await screenshot(page, 'keys-created')
  await page.getByRole('button', { name: 'I have stored it' }).click()
  await page.getByRole('cell', { name: 'billing backend', exact: true }).waitFor()
  t.notOk((await page.content()).includes(value), 'and never again')

  // Audit log: filter, then export the filtered rows as CSV.
  await page.goto(`${origin}/console/audit-log`)
  await h1(page, 'Audit log')
  await page.getByLabel('Action').selectOption('LOGIN')
  await page.getByLabel('Outcome').selectOption('false')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  await page.getByRole('cell', { name: '203.0.113.9' }).waitFor()
  t.equal(await page.getByRole('cell', { name: /^Success$/ }).count(), 0, 'only failures listed')
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Export CSV' }).click()
  const csv = readFileSync(await (await download).path(), 'utf8')
    .trim()
    .split('\r\n')
  t.match(csv[0], /^created_at,action,success,/, 'CSV header')
  t.equal(csv.length, 2, 'one failed login row')
  t.match(csv[1], /LOGIN,false,.*203\.0\.113\.9/, 'the filtered row')

  // Settings: the password policy, checked against the document's schema before it is sent.
  await page.goto(`${origin}/console/settings`)
  await h1(page, 'Settings')
  const minLength = page.getByRole('group', { name: 'Password rules' }).getByLabel('Minimum length')
  await minLength.fill('5')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page.getByRole('alert').filter({ hasText: 'must be at least 8' }).waitFor()
  t.pass('a value outside the schema is refused in the form')
  await minLength.fill('14')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page.getByRole('status').filter({ hasText: 'Settings saved. Changed: Password rules.' }).waitFor()
  const stored = await app.ctx.dbs.main
    .selectFrom('tenants')
    .select('auth_config')
    .where('id', '=', tenant.id)
    .executeTakeFirstOrThrow()
  t.equal(
    (stored.auth_config as { passwordPolicy?: { minLength?: number } }).passwordPolicy?.minLength,
    14,
    'stored',
  )

  // Settings, designed: sections in plain words, and durations in minutes, hours or days.
  for (const heading of [
    'Sign-in',
    'Passwords',
    'Sessions and tokens',
    'Second factor and passkeys',
    'Email',
  ])
    await page.getByRole('heading', { level: 3, name: heading }).waitFor()
  const lifetime = page.getByLabel('Access token lifetime', { exact: true })
  t.equal(await lifetime.inputValue(), '15', 'the default 900 seconds as 15 …')
  t.equal(await page.getByLabel('Access token lifetime: unit').inputValue(), '60', '… minutes')
  t.equal(
    await page.getByLabel('Refresh token lifetime: unit').inputValue(),
    '86400',
    'the refresh token’s in days',
  )
  await lifetime.fill('30')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page.getByRole('status').filter({ hasText: 'Changed: Access token lifetime.' }).waitFor()
  const after = await app.ctx.dbs.main
    .selectFrom('tenants')
    .select('auth_config')
    .where('id', '=', tenant.id)
    .executeTakeFirstOrThrow()
  t.equal(
    (after.auth_config as { accessTokenExpiresIn?: number }).accessTokenExpiresIn,
    1800,
    '30 minutes stored as seconds',
  )
  t.equal(await page.getByText(/`|[A-Z]{3,}_[A-Z]+/).count(), 0, 'no backticks or error codes in the help')
  // A bound of the schema (60 seconds) said in the field's unit, in the list and under the field.
  await lifetime.fill('0.5')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page
    .getByRole('alert')
    .filter({ hasText: 'Access token lifetime must be at least 1 minute' })
    .waitFor()
  t.equal(
    await page.getByText('Access token lifetime must be at least 1 minute', { exact: true }).count(),
    2,
    'in the list and under the field, in its unit',
  )
  t.equal(await page.getByText(/>= ?60|at least 60/).count(), 0, 'nowhere in seconds')

  t.same(problems, [], 'no CSP violation or page error')
})
