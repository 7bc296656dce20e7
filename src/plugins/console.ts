import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyStatic from '@fastify/static'
import { routes } from '../../generated/routes.js'

/**
 * The console's policy: everything from this origin, no inline script or style, no plugin, not framed.
 * Why not helmet's: helmet's `upgrade-insecure-requests` breaks the page over plain HTTP on a non-loopback
 * host (see plugins/docs.ts), and its `style-src` allows inline styles the console does not need.
 * img-src allows data: for the QR code of a TOTP enrollment, drawn from the SVG the API answers.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Hashed by Vite (name-hash.ext): never change under their name, so browsers keep them a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * Where the built console is: beside the repository root's console/ folder, seen from src/plugins/ (tsx,
 * tests) or from dist/ (the esbuild bundle that `npm start` runs). CONSOLE_DIST overrides it.
 */
export function consoleDist(): string | undefined {
  const candidates = [
    process.env.CONSOLE_DIST,
    resolve(import.meta.dirname, '../console/dist'),
    resolve(import.meta.dirname, '../../console/dist'),
  ]
  return candidates.find((dir) => dir !== undefined && existsSync(resolve(dir, 'index.html')))
}

/** The pages a mail's link opens (section 18), documented as operations: screens of the one application. */
const LINK_PAGES = ['getResetPasswordPage', 'getVerifyEmailPage'] as const

/**
 * GET /console and below: the console's single-page application (contract section 19). Hashed assets
 * under /console/assets/ with a year's cache (a missing one is a 404, never the page); every other path,
 * the mail links' pages included, is one of the app's screens and gets index.html, `no-store` so a new
 * build is seen at once.
 */
/** `root`: the built console (default: found by consoleDist); null: not built (tests). */
async function consolePlugin(app: FastifyInstance, opts: { root?: string | null }): Promise<void> {
  const root = opts.root === undefined ? consoleDist() : opts.root
  // Encapsulated (no fastify-plugin): this hook and policy apply to the console's routes only. Why no
  // referrer: a mail's link carries its token in the query until the page takes it out of the address.
  app.addHook('onRequest', (_req, reply, done) => {
    reply.header('content-security-policy', CONSOLE_CSP).header('referrer-policy', 'no-referrer')
    done()
  })
  // Why registered with their operation: the document lists them, and metrics and logs name them.
  const linkPages = (handler: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) => {
    for (const id of LINK_PAGES) {
      const spec = routes[id]
      app.route({ method: spec.method, url: spec.url, config: { operationId: id, spec }, handler })
    }
  }
  if (!root) {
    // Why not fail the start: the API works without its console; say how to get it.
    const missing = async (_req: unknown, reply: FastifyReply) =>
      reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build:console` (npm start does it).\n')
    app.get('/console', missing)
    app.get('/console/*', missing)
    linkPages(missing)
    return
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    // Why no wildcard: the files are known at start (a build is immutable), and the app's routes need
    // the wildcard below for the index.html fallback.
    wildcard: false,
    index: false,
    // The build writes name.br and name.gz beside each text file (console/vite.config.ts): a browser that
    // accepts one gets it, with `Vary: Accept-Encoding`, and no CPU is spent compressing per request.
    preCompressed: true,
    setHeaders: (res, path) => {
      res.header('cache-control', path.includes('/assets/') ? IMMUTABLE : 'no-store')
    },
  })
  const page = async (_req: unknown, reply: FastifyReply) =>
    reply.header('cache-control', 'no-store').sendFile('index.html')
  app.get('/console', page)
  app.get('/console/*', async (req, reply) => {
    if (req.url.startsWith('/console/assets/')) return reply.callNotFound()
    return page(req, reply)
  })
  linkPages(page)
}

export default consolePlugin
