import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'

// The console's page as the service answers it, wherever the route is: the console plugin's screens
// (src/plugins/console.ts) and the mail links' pages of the email module (src/modules/email/routes.ts).

declare module 'fastify' {
  interface FastifyInstance {
    /** The built console's folder, null when it is not built: decorated by src/plugins/console.ts. */
    consoleRoot: string | null
  }
}

/**
 * The console's policy: everything from this origin, no inline script or style, no plugin, not framed.
 * Why not helmet's: helmet's `upgrade-insecure-requests` breaks the page over plain HTTP on a non-loopback
 * host (see plugins/docs.ts), and its `style-src` allows inline styles the console does not need.
 * img-src allows data: for the QR code of a TOTP enrollment, drawn from the SVG the API answers.
 */
export const CONSOLE_CSP = consolePolicy("'self' data:")

/**
 * The provider's interaction page also shows the client's logo, from wherever its `logo_uri` says (https,
 * or http on loopback: what oauth-clients/uris.ts admits). No referrer goes with it.
 */
const INTERACTION_CSP = consolePolicy(
  "'self' data: https: http://127.0.0.1:* http://localhost:* http://[::1]:*",
)

/** The console's policy with its img-src. */
function consolePolicy(images: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images}`,
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** Hashed by Vite (name-hash.ext): never change under their name, so browsers keep them a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * Where the built console is: beside the repository root's console/ folder, seen from src/lib/ (tsx,
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

/**
 * Readies an encapsulated scope to answer with the console: every answer of the scope gets the console's
 * CSP and no referrer (a mail's link carries its token in the query until the page takes it out of the
 * address), and, with a build (`root`), `reply.sendFile` reads it. `files`: each file of the build is also
 * a route under /console/ (the console plugin); without, only sendFile (the mail links' pages). `logos`: the
 * interaction page's img-src, which admits the client's logo.
 */
export async function consoleScope(
  scope: FastifyInstance,
  root: string | null,
  opts: { files: boolean; logos?: boolean },
): Promise<void> {
  const policy = opts.logos ? INTERACTION_CSP : CONSOLE_CSP
  scope.addHook('onRequest', (_req, reply, done) => {
    reply.header('content-security-policy', policy).header('referrer-policy', 'no-referrer')
    done()
  })
  if (!root) return
  await scope.register(fastifyStatic, {
    root,
    prefix: '/console/',
    serve: opts.files,
    // Why no wildcard: the files are known at start (a build is immutable), and the app's routes need
    // the console plugin's wildcard for the index.html fallback.
    wildcard: false,
    index: false,
    // The build writes name.br and name.gz beside each text file (console/vite.config.ts): a browser that
    // accepts one gets it, with `Vary: Accept-Encoding`, and no CPU is spent compressing per request.
    preCompressed: true,
    setHeaders: (res, path) => {
      res.header('cache-control', path.includes('/assets/') ? IMMUTABLE : 'no-store')
    },
  })
}

/** The console's page: index.html, `no-store` so a new build is seen at once. Needs consoleScope's sendFile. */
export async function sendConsolePage(reply: FastifyReply): Promise<FastifyReply> {
  return reply.header('cache-control', 'no-store').sendFile('index.html')
}

/** The answer when the console is not built. Why not fail the start: the API works without its console. */
export async function consoleNotBuilt(reply: FastifyReply): Promise<FastifyReply> {
  return reply
    .code(503)
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send('The console is not built: run `npm run build:console` (npm start does it).\n')
}
