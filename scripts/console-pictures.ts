/**
 * The README's pictures of the console (issue 44), made the same way every time: the service on a throw-away
 * PGlite database (memory://) on a loopback port, a tenant "Acme" (code `acme`) filled through the public API
 * as its people would fill it, and Chromium (Debian's, as test/console/browser.ts starts it) signed in as its
 * administrator, writing viewport screenshots at 1440×900 into docs/:
 * console-overview.png, console-users.png, console-settings.png, console-audit-log.png and console-dark.png
 * (the Roles screen under prefers-color-scheme: dark).
 *
 * Usage: npx tsx scripts/console-pictures.ts (or `make pictures`). CHROMIUM_PATH names another Chromium.
 *
 * Nothing leaves loopback: the service gets no SMTP_URL, Redis or upstream, and the browser's requests to any
 * other host are aborted. The server, the browser and its profile directory are removed at the end, also on
 * an error or Ctrl-C.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { insertAuditRow } from '../src/modules/audit/queries.js'
import { randomToken } from '../src/lib/tokens.js'

const ROOT = resolve(import.meta.dirname, '..')
const DOCS = join(ROOT, 'docs')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const WIDTH = 1440
const HEIGHT = 900

/** The tenant's people. The password is the same for all: these are pictures, not accounts. */
const PASSWORD = 'Acme-console-demo-2026'
const ADMIN = 'ana@acme.example'
interface Person {
  email: string
  username?: string
  roles: string[]
  /** Deactivated by the admin today. */
  inactive?: boolean
}
const PEOPLE: Person[] = [
  { email: 'bruno@acme.example', username: 'bruno', roles: ['user', 'support'] },
  { email: 'carla@acme.example', username: 'carla', roles: ['user'] },
  { email: 'diego@acme.example', roles: ['user'], inactive: true },
  { email: 'elena@acme.example', username: 'elena', roles: ['user', 'support'] },
  { email: 'felipe@acme.example', roles: ['user'] },
  { email: 'gabriela@acme.example', roles: ['admin'] },
]

/** Where the people sign in from, as a proxy on loopback would say (TRUST_PROXY=loopback). */
const OFFICE = '192.0.2.10'
const HOME = '192.0.2.77'
const MOBILE = '192.0.2.140'
const STRANGER = '203.0.113.9'
const STRANGER_TOO = '203.0.113.14'
const SCANNER = '198.51.100.23'
const BROWSERS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
]

/** A small deterministic generator (mulberry32), so the history is the same on every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = s
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

type Json = Record<string, unknown>

/** The service's API over loopback, as a client would call it. */
function api(base: string) {
  return async function request(
    method: string,
    path: string,
    opts: { body?: unknown; token?: string; key?: string; ip?: string; ua?: string; expect?: number } = {},
  ): Promise<Json> {
    const headers: Record<string, string> = { 'user-agent': opts.ua ?? BROWSERS[0]! }
    if (opts.body !== undefined) headers['content-type'] = 'application/json'
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.key) headers['x-client-key'] = opts.key
    if (opts.ip) headers['x-forwarded-for'] = opts.ip
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    })
    const text = await res.text()
    const expect = opts.expect ?? (method === 'POST' ? 201 : 200)
    if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} (wanted ${expect}): ${text}`)
    // Every answer with a body is the envelope { success, data }.
    return text ? ((JSON.parse(text) as { data?: Json }).data ?? {}) : {}
  }
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
  // The console's build, when missing or stale (the same script `npm start` runs).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-console.mjs')], { stdio: 'inherit' })

  const platformKey = 'ck_' + randomToken(32)
  const cleanups: (() => Promise<void> | void)[] = []
  const cleanUp = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn()
  }
  process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)))
  try {
    // The service as `npm start` builds it, on an in-memory PGlite; listening on loopback only.
    const config = loadConfig({
      DATABASE_URL: 'memory://',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: 'loopback',
      BOOTSTRAP_CLIENT_KEY: platformKey,
    })
    const app = await buildApp(config)
    cleanups.push(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    if (!address || typeof address === 'string') throw new Error('no TCP address')
    // localhost: the origin the console is opened at, as under `make run`.
    const base = `http://localhost:${address.port}`
    const call = api(`http://127.0.0.1:${address.port}`)

    // The tenant and its administrator, created by the platform's operator.
    const tenant = await call('POST', '/api/v1/tenants', {
      key: platformKey,
      body: { code: 'acme', name: 'Acme', admin: { email: ADMIN, password: PASSWORD } },
    })
    const tenantId = String(tenant.id)
    const login = (identifier: string, ip: string, ua: string, password = PASSWORD, expect = 200) =>
      call('POST', '/api/v1/login', {
        body: { tenantCode: 'acme', identifier, password },
        ip,
        ua,
        expect,
      })
    const first = String((await login(ADMIN, OFFICE, BROWSERS[0]!)).accessToken)

    // A custom permission and a role that carries it. The admin role holds the tenant's own permissions too,
    // from the next token on: so Ana signs in again before giving it.
    await call('POST', '/api/v1/permissions', {
      token: first,
      ip: OFFICE,
      body: { name: 'tickets:refund', description: 'Refund a customer’s order from a support ticket' },
    })
    const asAna = { token: String((await login(ADMIN, OFFICE, BROWSERS[0]!)).accessToken), ip: OFFICE }
    await call('POST', '/api/v1/roles', {
      ...asAna,
      body: {
        name: 'support',
        description: 'Customer support: reads users, refunds orders',
        level: 10,
        permissions: ['tickets:refund', 'users:read'],
      },
    })

    // Settings: sign-in by username too, lockout on, a stricter password policy, shorter access tokens, the
    // sign-in pages' look.
    await call('PATCH', `/api/v1/tenants/${tenantId}/config`, {
      ...asAna,
      body: {
        accessTokenExpiresIn: 600,
        loginIdentifiers: ['email', 'username'],
        maxConcurrentSessions: 5,
        passwordPolicy: { minLength: 12, requireDigit: true, rejectCommon: true },
        lockout: { enabled: true, threshold: 5, windowSeconds: 900 },
        branding: { displayName: 'Acme', color: '#0b5cad' },
      },
    })

    // The people.
    const ids = new Map<string, string>([[ADMIN, String(tenant.adminUserId)]])
    for (const p of PEOPLE) {
      const user = await call('POST', '/api/v1/register', {
        ...asAna,
        body: {
          email: p.email,
          ...(p.username ? { username: p.username } : {}),
          password: PASSWORD,
          roles: p.roles,
          emailVerified: true,
        },
      })
      ids.set(p.email, String(user.id))
    }

    // A month of sign-ins before today, as the service writes them (a request cannot be backdated, so these
    // rows go straight into the audit log): working hours (UTC) busier, weekends quiet, now and then a
    // mistyped password. Written before anything asks for the statistics, so the hourly rollup counts them.
    const random = seeded(44)
    const now = Date.now()
    const hourStart = now - (now % 3_600_000)
    for (let h = 30 * 24; h >= 1; h--) {
      const at = hourStart - h * 3_600_000
      const d = new Date(at)
      const weekend = d.getUTCDay() === 0 || d.getUTCDay() === 6
      const working = d.getUTCHours() >= 8 && d.getUTCHours() < 19
      const mean = (working ? 1.6 : 0.15) * (weekend ? 0.25 : 1)
      const count = Math.floor(mean * 2 * random())
      for (let i = 0; i < count; i++) {
        const email = [...ids.keys()][Math.floor(random() * ids.size)]!
        const failed = random() < 0.08
        await insertAuditRow(app.ctx.dbs.main, {
          tenant_id: tenantId,
          user_id: ids.get(email)!,
          action: 'LOGIN',
          success: !failed,
          error_message: failed ? 'wrong password' : null,
          ip_address: random() < 0.7 ? OFFICE : HOME,
          user_agent: BROWSERS[Math.floor(random() * BROWSERS.length)]!,
          actor_type: null,
          actor_id: null,
          metadata: JSON.stringify(failed ? { reason: 'wrong password' } : {}),
          request_id: null,
          created_at: new Date(at + Math.floor(random() * 3_600_000)),
        })
      }
    }

    // Today: someone guessing at the admin's addresses from two machines (five failures of one identifier
    // lock it), then the team. The service allows five sign-in attempts a minute from one address.
    for (const guess of [
      'root@acme.example',
      'test@acme.example',
      'admin@acme.example',
      'admin@acme.example',
    ]) {
      await login(guess, STRANGER, 'python-requests/2.32.3', 'Password123!', 401)
    }
    for (let i = 0; i < 3; i++) {
      await login('admin@acme.example', STRANGER_TOO, 'python-requests/2.32.3', 'acme1234', 401)
    }
    await login('it@acme.example', SCANNER, 'curl/8.7.1', 'acme', 401)
    await login('bruno', OFFICE, BROWSERS[1]!)
    await login('carla@acme.example', HOME, BROWSERS[2]!, 'acme-2025', 401)
    await login('carla@acme.example', HOME, BROWSERS[2]!)
    await login('elena', MOBILE, BROWSERS[0]!)

    // A backend's Client Key, which reads the users a few times; Diego leaves, and tries to sign in after.
    const robot = await call('POST', '/api/v1/client-keys', {
      ...asAna,
      body: { name: 'Billing backend', scopes: ['users:read'] },
    })
    for (let i = 0; i < 3; i++)
      await call('GET', '/api/v1/users?limit=5', { key: String(robot.key), ip: OFFICE })
    const diego = PEOPLE.find((p) => p.inactive)!.email
    await call('PATCH', `/api/v1/users/${ids.get(diego)}`, { ...asAna, body: { status: 'INACTIVE' } })
    await login(diego, HOME, BROWSERS[1]!, PASSWORD, 403)

    // The browser, signed in as the administrator.
    const profile = mkdtempSync(join(tmpdir(), 'tessera-pictures-'))
    cleanups.push(() => rmSync(profile, { recursive: true, force: true }))
    const context: BrowserContext = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 60_000,
      viewport: { width: WIDTH, height: HEIGHT },
      deviceScaleFactor: 1,
      locale: 'en-US',
      timezoneId: 'UTC',
      colorScheme: 'light',
      // Ana at the office, as the proxy would say (the requests themselves stay on loopback).
      extraHTTPHeaders: { 'x-forwarded-for': OFFICE },
    })
    cleanups.push(() => context.close())
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url())
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
      return loopback || url.protocol === 'data:' || url.protocol === 'blob:'
        ? route.continue()
        : route.abort()
    })
    const page = context.pages()[0] ?? (await context.newPage())
    page.setDefaultTimeout(30_000)
    await page.goto(`${base}/console`)
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.getByLabel('Tenant').fill('acme')
    await page.getByLabel('Email, username or CPF/CNPJ').fill(ADMIN)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()

    // Each screen through the menu, as a person moves: a reload would renew the session each time, and
    // the audit log would show it.
    const written: string[] = []
    const picture = async (screen: string, name: string, ready?: (p: Page) => Promise<void>) => {
      await page
        .getByRole('navigation', { name: 'Screens' })
        .getByRole('link', { name: screen, exact: true })
        .click()
      await page.getByRole('heading', { level: 1, name: screen }).waitFor()
      await ready?.(page)
      await page.waitForLoadState('networkidle')
      // The charts draw on the next frames.
      await page.waitForTimeout(500)
      const file = join(DOCS, `console-${name}.png`)
      await page.screenshot({ path: file })
      written.push(file)
    }
    await picture('Overview', 'overview', (p) =>
      p.getByText('Logins per day, last 30 days', { exact: true }).waitFor(),
    )
    await picture('Users', 'users', (p) => p.getByText('gabriela@acme.example').waitFor())
    await picture('Settings', 'settings')
    await picture('Audit log', 'audit-log', (p) =>
      p
        .getByRole('table')
        .getByText(/signed in/)
        .first()
        .waitFor(),
    )
    await page.emulateMedia({ colorScheme: 'dark' })
    await picture('Roles', 'dark', (p) => p.getByText('support', { exact: true }).first().waitFor())
    for (const file of written)
      console.log(`${relative(ROOT, file)}: ${Math.round(statSync(file).size / 1024)} KB`)
  } finally {
    await cleanUp()
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err)
  process.exit(1)
})
