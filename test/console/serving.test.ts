import t from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { buildTestApp } from '../helpers/app.js'
import { helmetHeaders } from '../../src/plugins/security-headers.js'
import { CONSOLE_CSP } from '../../src/plugins/console.js'
import { buildConsole } from './browser.js'

// How the service serves the console (contract section 19): its own CSP, the index.html fallback for the
// app's screens, immutable hashed assets, and a first load within 250 KB gzip. No browser needed.

const DIST = resolve(import.meta.dirname, '../../console/dist')
buildConsole()

t.test('console served: index.html for every screen, no-store, the console’s CSP', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/console', '/console/', '/console/users', '/console/users/abc', '/console/sign-in']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, `${url}: 200`)
    t.match(res.headers['content-type'], /^text\/html/, `${url}: the app's page`)
    t.match(res.body, /<div id="root"><\/div>/, `${url}: index.html`)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: never cached, so a new build is seen at once`)
    t.equal(res.headers['content-security-policy'], CONSOLE_CSP, `${url}: the console’s CSP`)
  }
  t.notMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|https:|\*/, 'no inline script, no eval, no other origin')
  t.match(CONSOLE_CSP, /script-src 'self'/, 'scripts from this origin only')
  const api = await app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(
    api.headers['content-security-policy'],
    helmetHeaders()['content-security-policy'],
    'the API keeps helmet’s',
  )
})

t.test('console assets: a year’s immutable cache; a missing one is a 404, never the page', async (t) => {
  const app = await buildTestApp(t)
  const assets = readdirSync(join(DIST, 'assets'))
  t.ok(assets.length >= 2, 'a script and a stylesheet')
  for (const name of assets) {
    const res = await app.inject({ method: 'GET', url: `/console/assets/${name}` })
    t.equal(res.statusCode, 200, name)
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', `${name}: immutable`)
  }
  const missing = await app.inject({ method: 'GET', url: '/console/assets/index-nothere.js' })
  t.equal(missing.statusCode, 404, 'a missing asset: 404')
  t.equal(missing.json().code, 'NOT_FOUND', 'in the envelope')
})

t.test(
  'getResetPasswordPage, getVerifyEmailPage: the mail links’ pages are the console’s own page, no inline script',
  async (t) => {
    const app = await buildTestApp(t)
    const index = readFileSync(join(DIST, 'index.html'), 'utf8')
    t.notMatch(index, /<script>|<script(?![^>]*\bsrc=)[^>]*>/, 'index.html holds no inline script')
    const token = 'T'.repeat(43)
    for (const path of ['/console/reset-password', '/console/verify-email']) {
      for (const query of [`?tenant=acme&token=${token}`, '', '?other=1']) {
        const res = await app.inject({ method: 'GET', url: path + query })
        t.equal(res.statusCode, 200, `${path}${query ? ' with ' + query.slice(0, 12) : ''}: 200`)
        t.equal(
          res.body,
          index,
          'the one application’s index.html (an incomplete link is the page’s to tell)',
        )
        t.equal(res.headers['content-security-policy'], CONSOLE_CSP, 'the console’s CSP')
        t.equal(res.headers['cache-control'], 'no-store', 'nothing cached')
        t.equal(res.headers['referrer-policy'], 'no-referrer', 'the token is sent nowhere by a referrer')
        t.notMatch(res.body, token, 'the server does not echo the token')
      }
    }
  },
)

t.test(
  'getResetPasswordPage, getVerifyEmailPage: console not built: 503 that says how to build it, the API unaffected',
  async (t) => {
    const app = await buildTestApp(t, {}, { consoleRoot: null })
    for (const url of [
      '/console/users',
      '/console/reset-password?tenant=acme&token=x',
      '/console/verify-email',
    ]) {
      const res = await app.inject({ method: 'GET', url })
      t.equal(res.statusCode, 503, url)
      t.match(res.body, /^The console is not built: run `npm run build:console`/)
      t.equal(res.headers['content-security-policy'], CONSOLE_CSP)
    }
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/health' })).statusCode, 200, 'the API answers')
  },
)

/** What the server sends for `url` to a client that accepts `encoding`: the bytes on the wire and the text. */
async function fetchAs(app: Awaited<ReturnType<typeof buildTestApp>>, url: string, encoding: string) {
  const res = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': encoding } })
  const wire = res.rawPayload
  const sent = res.headers['content-encoding']
  const text = (
    sent === 'br' ? brotliDecompressSync(wire) : sent === 'gzip' ? gunzipSync(wire) : wire
  ).toString('utf8')
  return { res, wire: wire.length, sent, text }
}

t.test(
  'console weight: the first load, as the server sends it to a browser, is at most 250 KB',
  async (t) => {
    const app = await buildTestApp(t)
    // What Chromium sends on a plain-HTTP origin (br needs HTTPS there); a browser on HTTPS adds br.
    for (const encoding of ['gzip, deflate', 'gzip, deflate, br, zstd']) {
      const page = await fetchAs(app, '/console', encoding)
      t.equal(page.res.statusCode, 200)
      const linked = [...page.text.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1] as string)
      t.ok(
        linked.some((f) => f.endsWith('.js')) && linked.some((f) => f.endsWith('.css')),
        'a script and a stylesheet',
      )
      let bytes = page.wire
      for (const url of linked) {
        const asset = await fetchAs(app, url, encoding)
        t.equal(asset.res.statusCode, 200, url)
        if (/\.(js|css)$/.test(url)) {
          t.ok(asset.sent, `${url}: sent compressed (${String(asset.sent)})`)
          t.match(String(asset.res.headers.vary), /accept-encoding/i, `${url}: Vary: Accept-Encoding`)
          t.equal(
            asset.text,
            readFileSync(join(DIST, url.slice('/console/'.length)), 'utf8'),
            'the same file',
          )
        }
        bytes += asset.wire
      }
      t.comment(`first load with "${encoding}": ${(bytes / 1024).toFixed(1)} KB on the wire`)
      t.ok(bytes <= 250 * 1024, `${(bytes / 1024).toFixed(1)} KB <= 250 KB`)
    }
    const plain = await fetchAs(app, '/console', 'identity')
    t.equal(plain.sent, undefined, 'a client that accepts no encoding gets the file as it is')
  },
)
