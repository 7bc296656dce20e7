import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'
import { axeAtBothWidths, buildConsole, launch, listen, NO_BROWSER, openPage } from './browser.js'

// The console in Brazilian Portuguese (issue 44, "Looks and locale"): a browser that asks for pt-BR gets the
// sign-in and the screens in Portuguese, `<html lang>` says so, the switch goes back to English and a reload
// keeps it; axe at both widths on the Portuguese pages.

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

t.setTimeout(300_000)
t.test(
  'console in pt-BR: chosen from the browser, switched back to English',
  { skip: NO_BROWSER },
  async (t) => {
    buildConsole()
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { email: 'admin@acme.test', roles: ['admin'] })
    const origin = await listen(app)
    const context = await launch(t, 1440, 'pt-BR')
    const { page, problems } = await openPage(context)

    await page.goto(`${origin}/console`)
    await page.getByRole('heading', { level: 1 }).waitFor()
    t.equal(
      await page.evaluate(() => document.documentElement.lang),
      'pt-BR',
      '<html lang> follows the browser',
    )
    t.equal(
      await page.getByRole('combobox', { name: 'Idioma do console' }).inputValue(),
      'pt-BR',
      'the switch shows it',
    )
    await axeAtBothWidths(t, page, 'pt-sign-in')
    await h1(page, 'Entrar')
    t.match(await page.title(), /^Entrar · Console Tessera$/)
    await page.getByRole('link', { name: 'Esqueceu sua senha?' }).waitFor()
    await page.getByLabel('Tenant').fill(tenant.code)
    await page.getByLabel('E-mail, nome de usuário ou CPF/CNPJ').fill(admin.email)
    await page.getByLabel('Senha', { exact: true }).fill(PASSWORD)
    await page.getByRole('button', { name: 'Entrar', exact: true }).click()

    await h1(page, 'Visão geral')
    await page.getByRole('navigation', { name: 'Telas' }).getByRole('link', { name: 'Usuários' }).waitFor()
    await page.getByText('Sessões ativas', { exact: true }).waitFor()
    t.match(await page.title(), /^Visão geral · Console Tessera$/, 'the page title')
    await axeAtBothWidths(t, page, 'pt-overview')

    await page.goto(`${origin}/console/users`)
    await h1(page, 'Usuários')
    await page.getByText('1 usuário', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'Criar usuário' }).waitFor()
    await page.getByRole('columnheader', { name: /Último login/ }).waitFor()
    // A sort link is the same in every language: the column's key, not its Portuguese heading.
    await page.getByRole('button', { name: /^Último login/ }).click()
    await page.waitForURL(/[?&]sort=last-login\b/)
    await axeAtBothWidths(t, page, 'pt-users')

    await page.goto(`${origin}/console/settings`)
    await h1(page, 'Configurações')
    await page.getByRole('heading', { level: 2, name: 'Configurações de autenticação' }).waitFor()
    await page.getByRole('button', { name: 'Salvar configurações' }).waitFor()
    await page.getByRole('heading', { level: 3, name: 'Sessões e tokens' }).waitFor()
    await page.getByLabel('Validade do token de acesso', { exact: true }).waitFor()
    await axeAtBothWidths(t, page, 'pt-settings')

    await page.goto(`${origin}/console/account`)
    await h1(page, 'Conta')
    await page.getByRole('heading', { level: 2, name: 'Segundo fator' }).waitFor()
    await page.getByRole('button', { name: 'Alterar senha' }).waitFor()
    await axeAtBothWidths(t, page, 'pt-account')

    // The audit log's sentences are the catalogue's too.
    await page.goto(`${origin}/console/audit-log`)
    await h1(page, 'Registro de auditoria')
    await page.getByRole('table').getByText('admin@acme.test entrou').first().waitFor()
    await axeAtBothWidths(t, page, 'pt-audit-log')

    await page.goto(`${origin}/console/settings`)
    await h1(page, 'Configurações')

    // The switch: English at once, and after a reload (localStorage), though the browser still asks for pt-BR.
    await page.getByRole('combobox', { name: 'Idioma do console' }).selectOption('en')
    await h1(page, 'Settings')
    t.equal(await page.evaluate(() => document.documentElement.lang), 'en')
    await page.reload()
    await h1(page, 'Settings')
    await page.getByRole('button', { name: 'Save settings' }).waitFor()
    t.equal(await page.getByRole('combobox', { name: 'Console language' }).inputValue(), 'en', 'remembered')
    t.equal(await page.evaluate(() => document.documentElement.lang), 'en')

    // And back to Portuguese from the switch.
    await page.getByRole('combobox', { name: 'Console language' }).selectOption('pt-BR')
    await h1(page, 'Configurações')
    t.same(problems, [], 'no CSP violation or page error')
  },
)
