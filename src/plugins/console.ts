import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { consoleDist, consoleNotBuilt, consoleScope, sendConsolePage } from '../lib/console-page.js'

export { CONSOLE_CSP } from '../lib/console-page.js'

/**
 * GET /console and below: the console's single-page application (contract section 19). Hashed assets
 * under /console/assets/ with a year's cache (a missing one is a 404, never the page); every other path
 * is one of the app's screens and gets index.html, `no-store` so a new build is seen at once. The mail
 * links' two pages are operations of the document, routed by the email module with the same pieces
 * (src/lib/console-page.ts).
 */
async function consoleScreens(app: FastifyInstance, { root }: { root: string | null }): Promise<void> {
  // Encapsulated (registered without fastify-plugin): the console's headers apply to its routes only.
  await consoleScope(app, root, { files: true })
  // Why not fail the start when it is not built: the API works without its console; the 503 says how.
  const page = root ? sendConsolePage : consoleNotBuilt
  app.get('/console', async (_req, reply) => page(reply))
  app.get('/console/*', async (req, reply) => {
    if (root && req.url.startsWith('/console/assets/')) return reply.callNotFound()
    return page(reply)
  })
}

/**
 * `root`: the built console (default: found by consoleDist); null: not built (tests). Decorates the app
 * with `consoleRoot`, which the email module's pages read.
 */
async function consolePlugin(app: FastifyInstance, opts: { root?: string | null }): Promise<void> {
  const root = (opts.root === undefined ? consoleDist() : opts.root) ?? null
  app.decorate('consoleRoot', root)
  await app.register(consoleScreens, { root })
}

export default fp(consolePlugin, { name: 'console' })
