import t from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import Fastify from 'fastify'
import { buildTestApp } from '../helpers/app.js'
import { helmetHeaders } from '../../src/plugins/security-headers.js'
import consolePlugin, { CONSOLE_CSP } from '../../src/plugins/console.js'
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
  const email = await app.inject({
    method: 'GET',
    url: '/console/reset-password?tenant=acme&token=' + 'a'.repeat(43),
  })
  t.equal(email.statusCode, 200, 'the email module’s reset page is still its own')
  t.match(email.body, /Choose a new password/, 'with its own form')
})

t.test('console not built: 503 that says how to build it, the API unaffected', async (t) => {
  const app = Fastify()
  await app.register(consolePlugin, { root: null })
  const res = await app.inject({ method: 'GET', url: '/console/users' })
  t.equal(res.statusCode, 503)
  t.match(res.body, /npm run build:console/)
  t.equal(res.headers['content-security-policy'], CONSOLE_CSP)
  await app.close()
})

t.test('console weight: the first load (index.html and what it links) is at most 250 KB gzip', async (t) => {
  const html = readFileSync(join(DIST, 'index.html'))
  const linked = [...html.toString().matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map(
    (m) => m[1] as string,
  )
  t.ok(
    linked.some((f) => f.endsWith('.js')) && linked.some((f) => f.endsWith('.css')),
    'a script and a stylesheet',
  )
  const bytes = [html, ...linked.map((f) => readFileSync(join(DIST, f)))]
    .map((b) => gzipSync(b, { level: 9 }).length)
    .reduce((a, b) => a + b, 0)
  t.comment(`first load: ${(bytes / 1024).toFixed(1)} KB gzip (${linked.join(', ')})`)
  t.ok(bytes <= 250 * 1024, `${(bytes / 1024).toFixed(1)} KB gzip <= 250 KB`)
})
