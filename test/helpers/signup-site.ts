import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { TestLike } from './app.js'

// A web site on a second loopback port (another origin than the service), as a tenant's sign-up page
// lives: its page, and the ALTCHA widget's script beside it as the page loads it (`./altcha.js`). Shared by
// the example page's browser test and the console's sign-up snippet test.

const WIDGET = join(resolve(import.meta.dirname, '../..'), 'node_modules/altcha/dist/altcha.js')

/** Serves `page()` (read at each request) at `/` and `/index.html`; returns the site's origin. */
export async function serveSignupSite(t: TestLike, page: () => string): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page())
    } else if (req.url === '/altcha.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(WIDGET))
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204).end() // the browser asks for it; a 404 would be logged as a failed resource
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('no TCP address')
  return `http://127.0.0.1:${address.port}`
}
