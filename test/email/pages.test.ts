import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { Script } from 'node:vm'
import { buildTestApp, type TestApp } from '../helpers/app.js'

// The default links' pages: plain HTML whose script calls the API; the CSP allows exactly that script.
// No browser here (explorer-browser.test.ts needs Chromium): the script is compiled, not run.

const hashOf = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`
const TOKEN = 'T'.repeat(43)

async function checkPage(t: Test, app: TestApp, path: string, api: string): Promise<void> {
  const res = await app.inject({ method: 'GET', url: `${path}?tenant=acme&token=${TOKEN}` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/html/)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['referrer-policy'], 'no-referrer')
  t.notMatch(res.body, TOKEN, 'the server does not echo the token')
  t.match(res.body, `data-api="${api}"`)
  const csp = String(res.headers['content-security-policy'])
  const script = /<script>([\s\S]*?)<\/script>/.exec(res.body)?.[1] ?? ''
  const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)?.[1] ?? ''
  t.ok(csp.includes(`script-src ${hashOf(script)}`), 'the inline script is the one the CSP names')
  t.ok(csp.includes(`style-src ${hashOf(style)}`), 'and the style')
  t.match(csp, /default-src 'none'/)
  t.match(csp, /connect-src 'self'/)
  t.doesNotThrow(() => new Script(script), 'the script compiles')
  const bad = await app.inject({ method: 'GET', url: `${path}?other=1` })
  t.equal(bad.statusCode, 400, 'VALIDATION_ERROR for a parameter it does not take')
}

t.test('the pages of the default email links', async (t) => {
  const app = await buildTestApp(t)
  t.test('getResetPasswordPage: 200, HTML with its own inline script only, nothing cached', (t) =>
    checkPage(t, app, '/console/reset-password', '/api/v1/password/reset'),
  )
  t.test('getVerifyEmailPage: 200, HTML with its own inline script only, nothing cached', (t) =>
    checkPage(t, app, '/console/verify-email', '/api/v1/email/verify'),
  )
})
