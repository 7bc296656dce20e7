import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'

// A passkey in a real browser: Debian's Chromium with its virtual authenticator (DevTools protocol), a test
// page on a loopback origin using @simplewebauthn/browser from node_modules: register a passkey, sign out,
// sign in with it. The page and the API share one origin through a small proxy, as a site's would.

function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean)
  return dirs.map((dir) => join(dir, 'chromium')).find((file) => existsSync(file))
}
const CHROMIUM = findChromium()
const NO_BROWSER =
  CHROMIUM && existsSync(CHROMIUM)
    ? false
    : `no Chromium at ${CHROMIUM ?? '`chromium` on the PATH'} (apt-get install -y chromium, or set ` +
      'CHROMIUM_PATH): passkeys were not checked in a browser'

const BUNDLE = resolve(
  import.meta.dirname,
  '../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js',
)
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title>
<script src="/simplewebauthn.js"></script><body>passkey test page</body>`

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
]

t.test(
  'loginWithPasskey: register a passkey in Chromium (virtual authenticator), sign out, sign in with it',
  { skip: NO_BROWSER },
  async (t) => {
    const app = await buildTestApp(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const apiAddress = app.server.address()
    if (!apiAddress || typeof apiAddress === 'string') throw new Error('no API address')
    const api = `http://127.0.0.1:${apiAddress.port}`

    // The page's origin: the bundle, the page, and /api/* passed on to the service.
    const site = createServer((req: IncomingMessage, res: ServerResponse) => {
      void (async () => {
        if (req.url === '/simplewebauthn.js') {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(BUNDLE))
        } else if (req.url?.startsWith('/api/')) {
          const chunks: Buffer[] = []
          for await (const c of req) chunks.push(c as Buffer)
          const headers: Record<string, string> = { 'content-type': 'application/json' }
          if (req.headers.authorization) headers.authorization = req.headers.authorization
          const upstream = await fetch(api + req.url, {
            method: req.method,
            headers,
            body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
          })
          res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text())
        } else {
          res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
        }
      })()
    })
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
    t.teardown(() => new Promise<void>((r) => site.close(() => r())))
    const sitePort = (site.address() as { port: number }).port
    const origin = `http://localhost:${sitePort}`

    const tenant = await createTenant(app, { webauthn: { rpId: 'localhost', origins: [origin] } })
    const user = await createUser(app, tenant)

    const profile = mkdtempSync(join(tmpdir(), 'tessera-passkeys-'))
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      timeout: 60_000,
    })
    t.teardown(async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    })
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    })
    await page.goto(`${origin}/`)

    const flow = { tenantCode: tenant.code, email: user.email, password: PASSWORD }
    const registered = await page.evaluate(async (f) => {
      type Json = Record<string, unknown>
      const post = async (path: string, body: unknown, token?: string): Promise<Json> => {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (token) headers.authorization = `Bearer ${token}`
        const r = await fetch(`/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
        return (await r.json()) as Json
      }
      const w = window as unknown as {
        SimpleWebAuthnBrowser: { startRegistration(o: { optionsJSON: unknown }): Promise<unknown> }
      }
      const login = await post('/login', {
        tenantCode: f.tenantCode,
        identifier: f.email,
        password: f.password,
      })
      const { accessToken, refreshToken } = login.data as { accessToken: string; refreshToken: string }
      const options = await post('/me/passkeys/options', {}, accessToken)
      const response = await w.SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options.data })
      const added = await post('/me/passkeys', { name: 'Chromium', response }, accessToken)
      const out = await post('/logout', { refreshToken }, accessToken)
      return { added, out }
    }, flow)
    t.match(registered.added, { success: true, data: { name: 'Chromium' } }, 'registered')
    t.match(registered.out, { success: true, data: { revoked: true } }, 'signed out')
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    t.equal(credentials.length, 1, 'the authenticator holds one credential')
    t.equal(credentials[0]?.isResidentCredential, true, 'a discoverable one')

    const signedIn = await page.evaluate(async (f) => {
      type Json = Record<string, unknown>
      const post = async (path: string, body: unknown): Promise<Json> => {
        const r = await fetch(`/api/v1${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
        return (await r.json()) as Json
      }
      const w = window as unknown as {
        SimpleWebAuthnBrowser: { startAuthentication(o: { optionsJSON: unknown }): Promise<unknown> }
      }
      const options = await post('/login/passkey/options', { tenantCode: f.tenantCode })
      const response = await w.SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options.data })
      const login = await post('/login/passkey', { tenantCode: f.tenantCode, response })
      const token = (login.data as { accessToken?: string } | undefined)?.accessToken
      const me = token
        ? ((await (
            await fetch('/api/v1/me', { headers: { authorization: `Bearer ${token}` } })
          ).json()) as Json)
        : null
      return { login, me }
    }, flow)
    t.match(
      signedIn.login,
      { success: true, data: { user: { email: user.email } } },
      'signed in with the passkey',
    )
    t.match(signedIn.me, { success: true, data: { id: user.id } }, 'its access token works')
  },
)
